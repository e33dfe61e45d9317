/* pipe.c — uv_pipe_t: Unix domain stream sockets (named: connect;
 * or a socket pair) and descriptors opened as pipes. Reads and writes are
 * stream.c's, listening too. */
#include <stdlib.h>
#include <string.h>

#include "stream.h"

/* The handle is malloc'd here and freed in uvev__on_close, on the loop
 * thread, after the kind's uv_close; or by uvev__adopt when the init fails. */
int uvev_pipe_new(uvev_loop *l, uint64_t id, uintptr_t *out) {
  uv_pipe_t *h = malloc(sizeof *h);
  if (h == NULL) return UV_ENOMEM;
  return uvev__adopt(l, (uv_handle_t *)h, uv_pipe_init(&l->loop, h, 0), id, out);
}

/* The handle owns fd from here on: uv_close closes it. */
int uvev_pipe_open(uintptr_t h, int fd) { return uv_pipe_open((uv_pipe_t *)h, fd); }

/* Frees the request on the loop thread: libuv calls this once (with the
 * error of a refused connect too, on the next turn; UV_ECANCELED when the
 * handle closed first), before the handle's close callback. */
static void uvev__on_pipe_connect(uv_connect_t *req, int status) {
  uvev_loop *l = uvev__loop_of((uv_handle_t *)req->handle);
  uvev__push(l, (uint64_t)(uintptr_t)req->handle->data, UVEV_DONE_CONNECT, status);
  l->reqs--;
  free(req);
}

/* Malloc'd here; freed by uvev__on_pipe_connect, which libuv always calls:
 * uv_pipe_connect reports every error through it. */
int uvev_pipe_connect(uvev_loop *l, uintptr_t h, const char *name) {
  uv_connect_t *req = malloc(sizeof *req);
  if (req == NULL) return UV_ENOMEM;
  uv_pipe_connect(req, (uv_pipe_t *)h, name, uvev__on_pipe_connect);
  l->reqs++;
  return 0;
}

/* The socket's name (peer = 0) or its peer's; *len is buf's size in, the
 * name's length out. */
int uvev_pipe_name(uintptr_t h, int peer, char *buf, size_t *len) {
  return peer ? uv_pipe_getpeername((uv_pipe_t *)h, buf, len) : uv_pipe_getsockname((uv_pipe_t *)h, buf, len);
}
