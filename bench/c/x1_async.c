/* x1_async.c: raw libuv comparator for workload X1 (cross-thread round trip:
 * main thread uv_async_send -> loop thread callback -> condvar back). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <uv.h>

static uv_loop_t loop;
static uv_async_t async;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static uint64_t requested; /* rounds requested by main, under mu */
static uint64_t completed; /* rounds acknowledged by loop, under mu */
static int stopping;       /* under mu */

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void on_async(uv_async_t *h) {
  pthread_mutex_lock(&mu);
  completed = requested; /* acknowledge everything sent so far */
  int stop = stopping;
  pthread_cond_signal(&cond);
  pthread_mutex_unlock(&mu);
  if (stop)
    uv_close((uv_handle_t *)h, NULL);
}

static void *loop_thread(void *arg) {
  (void)arg;
  uv_run(&loop, UV_RUN_DEFAULT);
  return NULL;
}

int main(int argc, char **argv) {
  long rounds = argc > 1 ? atol(argv[1]) : 20000;
  if (rounds <= 0) {
    fprintf(stderr, "rounds must be positive\n");
    return 1;
  }
  uv_loop_init(&loop);
  uv_async_init(&loop, &async, on_async);
  pthread_t th;
  if (pthread_create(&th, NULL, loop_thread, NULL) != 0) {
    fprintf(stderr, "pthread_create failed\n");
    return 1;
  }

  int64_t start = now_ns();
  for (long i = 0; i < rounds; i++) {
    pthread_mutex_lock(&mu);
    uint64_t want = ++requested;
    pthread_mutex_unlock(&mu);
    uv_async_send(&async);
    pthread_mutex_lock(&mu);
    while (completed < want)
      pthread_cond_wait(&cond, &mu);
    pthread_mutex_unlock(&mu);
  }
  int64_t elapsed = now_ns() - start;

  /* Ask the loop thread to close the async handle; uv_run then returns. */
  pthread_mutex_lock(&mu);
  stopping = 1;
  requested++;
  pthread_mutex_unlock(&mu);
  uv_async_send(&async);
  pthread_join(th, NULL);
  uv_loop_close(&loop);

  printf("X1 raw-c rtt_ns=%lld rounds=%ld\n", (long long)(elapsed / rounds),
         rounds);
  return 0;
}
