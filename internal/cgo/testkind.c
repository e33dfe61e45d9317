/* testkind.c — two kinds that exist for the tests of the loop contract: a
 * libuv timer (libuv's clock, libuv's timeout) and a thread-pool request (a
 * request in flight). They prove, through real libuv state, what every kind
 * relies on: an absolute libuv deadline, a fresh clock at start, requests
 * counted as active, and a Close that waits for them. */
#include <stdlib.h>
#include <unistd.h>

#include "uvev.h"

static void uvev__on_testtimer(uv_timer_t *h) {
  uvev_completion *c = uvev__push(uvev__loop_of((uv_handle_t *)h), (uint64_t)(uintptr_t)h->data, UVEV_DONE_TIMER, 0);
  c->n = (int64_t)uv_now(h->loop);
}

/* The uv_timer_t is malloc'd here and freed in uvev__on_close. */
int uvev_testtimer_new(uvev_loop *l, uint64_t id, uintptr_t *out) {
  uv_timer_t *h = malloc(sizeof *h);
  if (h == NULL) return UV_ENOMEM;
  return uvev__adopt(l, (uv_handle_t *)h, uv_timer_init(&l->loop, h), id, out);
}

int uvev_testtimer_start(uvev_loop *l, uintptr_t h, uint64_t timeout_ms, uint64_t repeat_ms) {
  uvev__enter(l);
  return uv_timer_start((uv_timer_t *)h, uvev__on_testtimer, timeout_ms, repeat_ms);
}

int uvev_testtimer_stop(uintptr_t h) { return uv_timer_stop((uv_timer_t *)h); }

typedef struct {
  uv_work_t req;
  uint64_t id;
  int sleep_us;
} uvev__testwork;

static void uvev__testwork_run(uv_work_t *req) {
  uvev__testwork *w = (uvev__testwork *)req;
  if (w->sleep_us > 0) usleep((useconds_t)w->sleep_us);
}

/* The request is freed here, in its after-work callback, on the loop thread:
 * libuv calls it exactly once, with UV_ECANCELED if uv_cancel got it first. */
static void uvev__testwork_done(uv_work_t *req, int status) {
  uvev__testwork *w = (uvev__testwork *)req;
  uvev_loop *l = (uvev_loop *)((char *)req->loop - offsetof(uvev_loop, loop));
  uvev__push(l, w->id, UVEV_DONE_WORK, status);
  l->reqs--;
  free(w);
}

/* Malloc'd here; freed by uvev__testwork_done (see above). */
int uvev_testwork_submit(uvev_loop *l, uint64_t id, int sleep_us, uintptr_t *out) {
  uvev__testwork *w = malloc(sizeof *w);
  if (w == NULL) return UV_ENOMEM;
  w->id = id;
  w->sleep_us = sleep_us;
  int err = uv_queue_work(&l->loop, &w->req, uvev__testwork_run, uvev__testwork_done);
  if (err != 0) {
    free(w);
    return err;
  }
  l->reqs++;
  *out = (uintptr_t)w;
  return 0;
}

/* Valid only while the request is in flight (Go tracks that). */
int uvev_testwork_cancel(uintptr_t req) { return uv_cancel((uv_req_t *)req); }
