/* d1_getaddrinfo.c: raw libuv comparator for workload D1 (N lookups of
 * "localhost" with uv_getaddrinfo, at most K in flight).
 *
 * Usage: d1_getaddrinfo [lookups [in_flight]]   (defaults 10000 and 64)
 *
 * Hints: AF_UNSPEC, SOCK_STREAM. Lookups run on libuv's thread pool at its
 * default size (UV_THREADPOOL_SIZE, 4 unless set). Prints lookups per
 * second, wall clock from the first request to the last callback. */
#include <netdb.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <uv.h>

static uv_loop_t *loop;
static long total, started, done;
static int failed;
static struct addrinfo hints;

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void on_resolved(uv_getaddrinfo_t *req, int status, struct addrinfo *res);

/* Starts the next lookup on req, or frees req (malloc'd in main, owned by
 * this chain of lookups) when none is left to start. */
static void start_one(uv_getaddrinfo_t *req) {
  if (started >= total || failed) {
    free(req);
    return;
  }
  started++;
  int err = uv_getaddrinfo(loop, req, on_resolved, "localhost", NULL, &hints);
  if (err < 0) {
    fprintf(stderr, "d1_getaddrinfo: uv_getaddrinfo: %s\n", uv_strerror(err));
    failed = 1;
    free(req);
  }
}

static void on_resolved(uv_getaddrinfo_t *req, int status, struct addrinfo *res) {
  if (status < 0) {
    fprintf(stderr, "d1_getaddrinfo: localhost: %s\n", uv_strerror(status));
    failed = 1;
  } else if (res == NULL) {
    fprintf(stderr, "d1_getaddrinfo: localhost: no address\n");
    failed = 1;
  }
  uv_freeaddrinfo(res);
  done++;
  start_one(req);
}

int main(int argc, char **argv) {
  total = argc > 1 ? atol(argv[1]) : 10000;
  long in_flight = argc > 2 ? atol(argv[2]) : 64;
  if (total <= 0 || in_flight <= 0) {
    fprintf(stderr, "d1_getaddrinfo: lookups and in_flight must be positive\n");
    return 1;
  }
  memset(&hints, 0, sizeof(hints));
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  loop = uv_default_loop();
  int64_t start = now_ns();
  for (long i = 0; i < in_flight && i < total; i++) {
    uv_getaddrinfo_t *req = malloc(sizeof(*req));
    if (req == NULL) {
      fprintf(stderr, "d1_getaddrinfo: out of memory\n");
      return 1;
    }
    start_one(req);
  }
  uv_run(loop, UV_RUN_DEFAULT);
  int64_t wall = now_ns() - start;
  uv_loop_close(loop);
  if (failed || done != total) {
    fprintf(stderr, "d1_getaddrinfo: %ld of %ld lookups completed\n", done,
            total);
    return 1;
  }
  printf("D1 raw-c lookups_per_s=%lld\n",
         (long long)(total * 1000000000LL / wall));
  return 0;
}
