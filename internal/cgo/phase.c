/* phase.c — the loop-phase hooks: uv_prepare_t (before libuv polls), uv_check_t
 * (after it polled) and uv_idle_t (while it has nothing else to do, which
 * makes it poll without blocking). One file for the three: they differ only
 * in their libuv type. */
#include <stdlib.h>

#include "phase.h"

static void uvev__phase_report(uv_handle_t *h) {
  uvev__push(uvev__loop_of(h), (uint64_t)(uintptr_t)h->data, UVEV_DONE_PHASE, 0);
}
static void uvev__on_prepare(uv_prepare_t *h) { uvev__phase_report((uv_handle_t *)h); }
static void uvev__on_check(uv_check_t *h) { uvev__phase_report((uv_handle_t *)h); }
static void uvev__on_idle(uv_idle_t *h) { uvev__phase_report((uv_handle_t *)h); }

/* The handle is malloc'd here (the largest of the three types) and freed in
 * uvev__on_close after the kind called uvev_close, or by uvev__adopt when the
 * init fails. */
int uvev_phase_new(uvev_loop *l, int which, uint64_t id, uintptr_t *out) {
  size_t size = uv_handle_size(UV_PREPARE);
  if (uv_handle_size(UV_CHECK) > size) size = uv_handle_size(UV_CHECK);
  if (uv_handle_size(UV_IDLE) > size) size = uv_handle_size(UV_IDLE);
  uv_handle_t *h = malloc(size);
  if (h == NULL) return UV_ENOMEM;
  int err;
  switch (which) {
    case UVEV_PHASE_PREPARE: err = uv_prepare_init(&l->loop, (uv_prepare_t *)h); break;
    case UVEV_PHASE_CHECK: err = uv_check_init(&l->loop, (uv_check_t *)h); break;
    case UVEV_PHASE_IDLE: err = uv_idle_init(&l->loop, (uv_idle_t *)h); break;
    default: err = UV_EINVAL;
  }
  return uvev__adopt(l, h, err, id, out);
}

int uvev_phase_start(uintptr_t ptr) {
  uv_handle_t *h = (uv_handle_t *)ptr;
  switch (h->type) {
    case UV_PREPARE: return uv_prepare_start((uv_prepare_t *)h, uvev__on_prepare);
    case UV_CHECK: return uv_check_start((uv_check_t *)h, uvev__on_check);
    case UV_IDLE: return uv_idle_start((uv_idle_t *)h, uvev__on_idle);
    default: return UV_EINVAL;
  }
}

int uvev_phase_stop(uintptr_t ptr) {
  uv_handle_t *h = (uv_handle_t *)ptr;
  switch (h->type) {
    case UV_PREPARE: return uv_prepare_stop((uv_prepare_t *)h);
    case UV_CHECK: return uv_check_stop((uv_check_t *)h);
    case UV_IDLE: return uv_idle_stop((uv_idle_t *)h);
    default: return UV_EINVAL;
  }
}
