/* fspoll.c — the fs poll kind: a uv_fs_poll_t, libuv's watch of a path by
 * stat(2) every interval (src/fs-poll.c). libuv calls back only when the
 * stat changed, or when it failed with an error other than the last one;
 * a record carries the status and, as its payload, the previous and the
 * current uv_stat_t one after the other (40 64-bit words; all zero where
 * libuv has none), freed by the turn after the record's. */
#include <stdlib.h>
#include <string.h>

#include "fspoll.h"

static void uvev__on_fspoll(uv_fs_poll_t *h, int status, const uv_stat_t *prev, const uv_stat_t *curr) {
  uvev_completion *c = uvev__push(uvev__loop_of((uv_handle_t *)h), (uint64_t)(uintptr_t)h->data, UVEV_DONE_FSPOLL, status);
  uv_stat_t *both = malloc(2 * sizeof *both);
  if (both == NULL) {
    c->status = UV_ENOMEM;
    return;
  }
  memcpy(&both[0], prev, sizeof *both);
  memcpy(&both[1], curr, sizeof *both);
  c->data = both;
  c->release = free;
  c->n = (int64_t)(2 * sizeof *both);
}

/* The uv_fs_poll_t is malloc'd here and freed in uvev__on_close, which
 * libuv calls once the poll's own timer and stat request are done with. */
int uvev_fspoll_new(uvev_loop *l, uint64_t id, uintptr_t *out) {
  uv_fs_poll_t *h = malloc(sizeof *h);
  if (h == NULL) return UV_ENOMEM;
  return uvev__adopt(l, (uv_handle_t *)h, uv_fs_poll_init(&l->loop, h), id, out);
}

/* libuv copies the path. The first stat runs at once; it is compared with
 * the next, and reported only when it fails. */
int uvev_fspoll_start(uvev_loop *l, uintptr_t h, const char *path, unsigned int interval_ms) {
  uvev__enter(l);
  return uv_fs_poll_start((uv_fs_poll_t *)h, uvev__on_fspoll, path, interval_ms);
}

int uvev_fspoll_stop(uintptr_t h) { return uv_fs_poll_stop((uv_fs_poll_t *)h); }
