/* l1_timers.c: raw libuv comparator for L1, timer lateness. N one-shot
 * uv_timer_t with timeouts uniform in [0, 20) ms (whole milliseconds, libuv's
 * unit), started from an idle-driven pump so that starts happen across the
 * loop's life, with a millisecond of work before every 500th. For each: time
 * from the uv_timer_start call to the callback, minus the timeout, on
 * CLOCK_MONOTONIC. Prints how many fired early, and the lateness at the
 * minimum, p10, p25, p50, p75, p90, p99 and the maximum. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <uv.h>

enum { N = 10000, MAX_MS = 20 };

typedef struct {
  uv_timer_t h;
  int64_t start_ns;
  int64_t timeout_ns;
} ltimer;

static int64_t late_ns[N];
static int nfired, nstarted, early;
static uint64_t rng_state = 88172645463325252ull;

static uint64_t next_rand(void) {
  uint64_t x = rng_state;
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  rng_state = x;
  return x;
}

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void spin_ns(int64_t d) {
  for (int64_t t = now_ns(); now_ns() - t < d;) {
  }
}

static void on_close(uv_handle_t *h) { free(h); }

static void on_timer(uv_timer_t *h) {
  ltimer *t = (ltimer *)h;
  int64_t d = now_ns() - t->start_ns - t->timeout_ns;
  if (d < 0) early++;
  late_ns[nfired++] = d;
  uv_close((uv_handle_t *)h, on_close);
}

/* A repeating 1 ms timer starts 100 timers per tick, as the Go side's
 * goroutine does between its sleeps. */
static void on_pump(uv_timer_t *pump) {
  for (int k = 0; k < 100 && nstarted < N; k++, nstarted++) {
    ltimer *t = malloc(sizeof *t);
    uv_timer_init(pump->loop, &t->h);
    uint64_t ms = next_rand() % MAX_MS;
    t->timeout_ns = (int64_t)ms * 1000000;
    if (nstarted % 500 == 0) spin_ns(1000000);
    t->start_ns = now_ns();
    uv_timer_start(&t->h, on_timer, ms, 0);
  }
  if (nstarted == N) uv_close((uv_handle_t *)pump, NULL);
}

static int cmp64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

int main(void) {
  uv_loop_t *loop = uv_default_loop();
  uv_timer_t pump;
  uv_timer_init(loop, &pump);
  uv_timer_start(&pump, on_pump, 0, 1);
  uv_run(loop, UV_RUN_DEFAULT);
  qsort(late_ns, N, sizeof late_ns[0], cmp64);
#define Q(p) ((long long)(late_ns[(N - 1) * (p) / 100] / 1000))
  printf("L1 raw-c early=%d min_us=%lld p10_us=%lld p25_us=%lld p50_us=%lld p75_us=%lld p90_us=%lld p99_us=%lld max_us=%lld\n",
         early, Q(0), Q(10), Q(25), Q(50), Q(75), Q(90), Q(99), Q(100));
  return uv_loop_close(loop) == 0 ? 0 : 1;
}
