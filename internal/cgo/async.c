/* async.c — the trigger kind: a uv_async_t. */
#include <stdlib.h>

#include "uvev.h"

static void uvev__on_async(uv_async_t *h) {
  uvev__push(uvev__loop_of((uv_handle_t *)h), (uint64_t)(uintptr_t)h->data, UVEV_DONE_ASYNC, 0);
}

/* The uv_async_t is malloc'd here, on the loop goroutine, and freed in
 * uvev__on_close, on the loop goroutine's thread inside uv_run, after the
 * kind called uvev_close (or by uvev__adopt when the init fails). */
int uvev_async_new(uvev_loop *l, uint64_t id, uintptr_t *out) {
  uv_async_t *h = malloc(sizeof *h);
  if (h == NULL) return UV_ENOMEM;
  return uvev__adopt(l, (uv_handle_t *)h, uv_async_init(&l->loop, h, uvev__on_async), id, out);
}

/* Safe from any thread while the handle is not closing (Go guarantees it). */
int uvev_async_send(uintptr_t h) { return uv_async_send((uv_async_t *)h); }
