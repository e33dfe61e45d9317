/* t1_timers.c: raw libuv comparator for workload T1 (N one-shot timers,
 * each malloc'd, closed and freed in its callback). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <uv.h>

static long fired;

static uint64_t rng_state;

/* xorshift64: small deterministic PRNG. */
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

static void on_close(uv_handle_t *h) { free(h); }

static void on_timer(uv_timer_t *t) {
  fired++;
  uv_close((uv_handle_t *)t, on_close);
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 1000000;
  long seed = argc > 2 ? atol(argv[2]) : 1;
  rng_state = (uint64_t)seed * 0x9E3779B97F4A7C15ull;
  if (rng_state == 0)
    rng_state = 0x9E3779B97F4A7C15ull;

  uv_loop_t *loop = uv_default_loop();
  int64_t start = now_ns();
  for (long i = 0; i < n; i++) {
    uv_timer_t *t = malloc(sizeof(*t));
    if (t == NULL) {
      fprintf(stderr, "malloc failed\n");
      return 1;
    }
    uv_timer_init(loop, t);
    uv_timer_start(t, on_timer, next_rand() % 100, 0);
  }
  uv_run(loop, UV_RUN_DEFAULT);
  int64_t wall = now_ns() - start;

  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  if (fired != n) {
    fprintf(stderr, "fired %ld of %ld timers\n", fired, n);
    return 1;
  }
  printf("T1 raw-c wall_ns=%lld peak_rss_kib=%ld fired=%ld\n", (long long)wall,
         ru.ru_maxrss, fired);
  uv_loop_close(loop);
  return 0;
}
