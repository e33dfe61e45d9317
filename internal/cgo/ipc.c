/* ipc.c — IPC pipes (uv_pipe_t made with ipc = 1): a Unix stream socket
 * that carries handles to and from another process. A handle goes out with
 * uv_write2, as one byte (the kind of handle: 'c' a connection, 'l' a
 * listening socket) that carries the descriptor; one comes in with the byte
 * that carried it, taken with uv_pipe_pending_count, uv_pipe_pending_type
 * and uv_accept into a new handle reported to Go. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>

#include "stream.h"

/* The byte a handle travels with. */
#define UVEV_PASS_CONN 'c'
#define UVEV_PASS_LISTENER 'l'

static uint64_t uvev__ipc_id(void *h) { return (uint64_t)(uintptr_t)((uv_handle_t *)h)->data; }

/* Malloc'd here, freed by uvev__on_close after the kind's uv_close (or by
 * uvev__adopt when the init fails). The descriptor is given by uvev_pipe_open. */
int uvev_ipc_new(uvev_loop *l, uint64_t id, uintptr_t *out) {
  uv_pipe_t *h = malloc(sizeof(uv_pipe_t));
  if (h == NULL) return UV_ENOMEM;
  return uvev__adopt(l, (uv_handle_t *)h, uv_pipe_init(&l->loop, h, 1), id, out);
}

/* A passed handle's stand-in: a pipe handle over a duplicate of the
 * descriptor to pass, owned by the write that passes it. It is no kind's
 * handle: its data is uvev__pass_mark, which uvev_loop_close_all leaves to
 * the write's callback (the only one that may close it, once libuv has
 * done with it). */
static char uvev__pass_mark;

int uvev__is_pass(uv_handle_t *h) { return h->data == &uvev__pass_mark; }

typedef struct {
  uv_write_t req;
  uv_pipe_t *send;
  char tag;
} uvev__pass;

static void uvev__on_pass_close(uv_handle_t *h) {
  uvev__loop_of(h)->handles--;
  free(h);
}

/* libuv calls this once per accepted uv_write2: when the descriptor went
 * out (sendmsg took it), or with the error that stopped it (UV_EPIPE: the
 * peer is gone; UV_ECANCELED: the pipe closed first), before the pipe's
 * close callback. The stand-in is closed here, which closes the duplicate;
 * the sender's own handle was never touched. */
static void uvev__on_pass(uv_write_t *req, int status) {
  uvev__pass *p = (uvev__pass *)req;
  uvev_loop *l = uvev__loop_of((uv_handle_t *)req->handle);
  uvev_completion *c = uvev__push(l, uvev__ipc_id(req->handle), UVEV_DONE_WRITE, status);
  c->n = 1;
  l->reqs--;
  uv_close((uv_handle_t *)p->send, uvev__on_pass_close);
  free(p);
}

/* Passes fd (a duplicate the shim owns from here on, closed whatever
 * happens) over the IPC pipe h with tag. A CompletionWrite record with h's
 * id reports the end, in the order of the passes and writes. */
int uvev_ipc_send(uvev_loop *l, uintptr_t h, int fd, int tag) {
  uvev__pass *p = malloc(sizeof *p);
  uv_pipe_t *s = malloc(sizeof *s);
  int err = (p == NULL || s == NULL) ? UV_ENOMEM : uv_pipe_init(&l->loop, s, 0);
  if (err != 0) {
    free(p);
    free(s);
    close(fd);
    return err;
  }
  s->data = &uvev__pass_mark;
  l->handles++;
  if ((err = uv_pipe_open(s, fd)) != 0) {
    close(fd);
    uv_close((uv_handle_t *)s, uvev__on_pass_close);
    free(p);
    return err;
  }
  p->send = s;
  p->tag = (char)tag;
  uv_buf_t b = uv_buf_init(&p->tag, 1);
  err = uv_write2(&p->req, (uv_stream_t *)h, &b, 1, (uv_stream_t *)s, uvev__on_pass);
  if (err != 0) {
    uv_close((uv_handle_t *)s, uvev__on_pass_close); /* closes fd */
    free(p);
    return err;
  }
  l->reqs++;
  return 0;
}

static void uvev__ipc_discard(void *h) { uv_close((uv_handle_t *)h, uvev__on_close); }

static void uvev__free_handle(uv_handle_t *h) { free(h); }

/* uvev__ipc_take accepts the next handle pending on the pipe into a new
 * stream handle of its type and reports it: a UVEV_DONE_HANDLE record, n =
 * its type (UV_TCP or UV_NAMED_PIPE), aux = the tag, data = the handle,
 * counted. Go adopts it as an IO; or, when the tag says it listens, makes a
 * listener of a duplicate of its descriptor (a listener is stream.c's
 * uvev__server, not a stream handle) and closes it; or the turn's release
 * closes it. A descriptor of another type (or a failed init) is accepted
 * into a plain pipe handle and closed at once: the record then reports
 * UV_EINVAL (UV_ENOMEM). Returns 0 while it took one. */
static int uvev__ipc_take(uvev_loop *l, uv_pipe_t *ipc, int tag) {
  uv_handle_type t = uv_pipe_pending_type(ipc);
  int known = (t == UV_TCP || t == UV_NAMED_PIPE) && (tag == UVEV_PASS_LISTENER || tag == UVEV_PASS_CONN);
  uv_stream_t *c;
  int err;
  if (known && t == UV_TCP) {
    c = malloc(sizeof(uv_tcp_t));
    err = c == NULL ? UV_ENOMEM : uv_tcp_init(&l->loop, (uv_tcp_t *)c);
  } else {
    c = malloc(sizeof(uv_pipe_t));
    err = c == NULL ? UV_ENOMEM : uv_pipe_init(&l->loop, (uv_pipe_t *)c, 0);
  }
  if (err != 0) {
    free(c);
    uvev__push(l, uvev__ipc_id(ipc), UVEV_DONE_HANDLE, err);
    return err; /* libuv keeps the descriptor: it closes it with the pipe */
  }
  err = uv_accept((uv_stream_t *)ipc, c);
  if (err == 0 && !known) err = UV_EINVAL;
  if (err != 0) {
    uv_close((uv_handle_t *)c, uvev__free_handle);
    uvev__push(l, uvev__ipc_id(ipc), UVEV_DONE_HANDLE, err);
    return 0;
  }
  c->data = NULL;
  l->handles++;
  uvev_completion *rec = uvev__push(l, uvev__ipc_id(ipc), UVEV_DONE_HANDLE, 0);
  rec->n = t;
  rec->aux = tag;
  rec->data = c;
  rec->release = uvev__ipc_discard;
  return 0;
}

static void uvev__on_ipc_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf);

/* uvev__ipc_unread reports whether bytes still wait in the pipe's socket.
 * libuv reports UV_EOF on a hang-up (POLLHUP) after any read shorter than
 * its buffer, taking a short read for a drained socket; but the kernel ends
 * a read of a Unix stream socket at each message that carries descriptors,
 * so each read of an IPC pipe is one handle's byte, short, and handles the
 * other end passed before it closed may still wait behind it. */
static int uvev__ipc_unread(uv_stream_t *s) {
  uv_os_fd_t fd;
  int n = 0;
  if (uv_fileno((uv_handle_t *)s, &fd) != 0) return 0;
  return ioctl(fd, FIONREAD, &n) == 0 && n > 0;
}

/* Each read brings the bytes that carried the descriptors now pending, one
 * byte each, in order. Bytes carry no other data here: they are dropped
 * once their handles are taken. The end of the stream (or an error) is a
 * UVEV_DONE_READ record with the status; an end libuv reports with bytes
 * still in the socket (uvev__ipc_unread) is none: reading starts again, and
 * the end comes after the last handle. */
static void uvev__on_ipc_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf) {
  uvev_loop *l = uvev__loop_of((uv_handle_t *)s);
  uv_pipe_t *ipc = (uv_pipe_t *)s;
  ssize_t i = 0;
  while (uv_pipe_pending_count(ipc) > 0) {
    int tag = i < nread ? (unsigned char)buf->base[i++] : 0;
    if (uvev__ipc_take(l, ipc, tag) != 0) break;
  }
  uvev__buf_put(buf->base);
  if (nread == UV_EOF && uvev__ipc_unread(s) &&
      uv_read_start(s, uvev__on_ipc_alloc, uvev__on_ipc_read) == 0) {
    return;
  }
  if (nread < 0) uvev__push(l, uvev__ipc_id(s), UVEV_DONE_READ, (int32_t)nread);
}

static void uvev__on_ipc_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
  (void)suggested;
  char *p = uvev__buf_get(uvev__loop_of(h));
  *buf = uv_buf_init(p, p == NULL ? 0 : UVEV_BUF_SIZE);
}

int uvev_ipc_read_start(uintptr_t h) {
  return uv_read_start((uv_stream_t *)h, uvev__on_ipc_alloc, uvev__on_ipc_read);
}
