/* tty.c — uv_tty_t: a terminal as a stream (reads and writes are
 * stream.c's), its mode and window size. */
#include <stdlib.h>

#include "stream.h"

/* The handle is malloc'd here and freed in uvev__on_close, on the loop
 * thread, after the kind's uv_close; or by uvev__adopt when the init fails.
 * libuv reopens the terminal when it can, so that making it non-blocking
 * does not touch the descriptor other code shares; fd stays the caller's. */
int uvev_tty_new(uvev_loop *l, uint64_t id, int fd, uintptr_t *out) {
  uv_tty_t *h = malloc(sizeof *h);
  if (h == NULL) return UV_ENOMEM;
  return uvev__adopt(l, (uv_handle_t *)h, uv_tty_init(&l->loop, h, fd, 0), id, out);
}

/* mode: UV_TTY_MODE_NORMAL, _RAW or _IO. */
int uvev_tty_set_mode(uintptr_t h, int mode) { return uv_tty_set_mode((uv_tty_t *)h, (uv_tty_mode_t)mode); }

int uvev_tty_winsize(uintptr_t h, int *width, int *height) { return uv_tty_get_winsize((uv_tty_t *)h, width, height); }
