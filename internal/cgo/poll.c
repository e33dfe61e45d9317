/* poll.c — the poll kind: a uv_poll_t watching a descriptor for readiness.
 * The record carries libuv's status (0, or UV_EBADF when epoll reported
 * POLLERR, after which libuv has stopped the handle) and, in n, the events
 * that fired (UV_READABLE | UV_WRITABLE | UV_DISCONNECT | UV_PRIORITIZED). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>

#include "poll.h"

static void uvev__on_poll(uv_poll_t *h, int status, int events) {
  uvev_completion *c = uvev__push(uvev__loop_of((uv_handle_t *)h), (uint64_t)(uintptr_t)h->data, UVEV_DONE_POLL, status);
  c->n = events;
}

/* A descriptor that is not open is refused before libuv sees it: libuv's
 * own check (epoll_ctl) would say EBADF too, but only after it made the
 * descriptor non-blocking. The uv_poll_t is malloc'd here and freed in
 * uvev__on_close, on the loop goroutine's thread, after the kind called
 * uvev_close (or by uvev__adopt when the init fails). */
int uvev_poll_new(uvev_loop *l, uint64_t id, int fd, uintptr_t *out) {
  if (fd < 0 || fcntl(fd, F_GETFD) == -1) return UV_EBADF;
  uv_poll_t *h = malloc(sizeof *h);
  if (h == NULL) return UV_ENOMEM;
  return uvev__adopt(l, (uv_handle_t *)h, uv_poll_init(&l->loop, h, fd), id, out);
}

/* Starting a started handle changes its mask (libuv's rule). */
int uvev_poll_start(uvev_loop *l, uintptr_t h, int events) {
  (void)l;
  return uv_poll_start((uv_poll_t *)h, events, uvev__on_poll);
}

int uvev_poll_stop(uintptr_t h) { return uv_poll_stop((uv_poll_t *)h); }
