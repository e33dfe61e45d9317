/* probe.c — driving mode (a) for the X1 measurement: a loop that blocks in
 * uv_run on a thread of its own and is woken with uv_async_send. Each wake-up
 * calls Go (uvcgoProbeWoken) from the loop thread. Used only by the benchmark
 * that compares this mode with the netpoller-driven reactor. */
#include <stdlib.h>

#include "probe.h"
#include "_cgo_export.h"

typedef struct {
  uv_loop_t loop;
  uv_async_t wake;
  uv_async_t stop;
} uvev__probe;

static void uvev__probe_woken(uv_async_t *h) { uvcgoProbeWoken((uintptr_t)h->data); }

static void uvev__probe_stop(uv_async_t *h) {
  uvev__probe *p = h->data;
  uv_close((uv_handle_t *)&p->wake, NULL);
  uv_close((uv_handle_t *)&p->stop, NULL);
}

/* Allocated here; freed by uvev_probe_run on the probe's own thread when its
 * loop ends (after uvev_probe_stop), or here on failure, once whatever was
 * initialised is closed. */
int uvev_probe_new(uintptr_t *out) {
  uvev__probe *p = calloc(1, sizeof *p);
  if (p == NULL) return UV_ENOMEM;
  int err = uv_loop_init(&p->loop);
  if (err != 0) {
    free(p);
    return err;
  }
  err = uv_async_init(&p->loop, &p->wake, uvev__probe_woken);
  if (err == 0) {
    err = uv_async_init(&p->loop, &p->stop, uvev__probe_stop);
    if (err != 0) uv_close((uv_handle_t *)&p->wake, NULL);
  }
  if (err != 0) {
    uv_run(&p->loop, UV_RUN_NOWAIT); /* runs the close callback, if any */
    uv_loop_close(&p->loop);
    free(p);
    return err;
  }
  p->wake.data = p;
  p->stop.data = p;
  *out = (uintptr_t)p;
  return 0;
}

void uvev_probe_run(uintptr_t ptr) {
  uvev__probe *p = (uvev__probe *)ptr;
  uv_run(&p->loop, UV_RUN_DEFAULT);
  uv_loop_close(&p->loop);
  free(p);
}

int uvev_probe_send(uintptr_t p) { return uv_async_send(&((uvev__probe *)p)->wake); }

void uvev_probe_stop(uintptr_t p) { uv_async_send(&((uvev__probe *)p)->stop); }
