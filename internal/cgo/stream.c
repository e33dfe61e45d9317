/* stream.c — what every uv_stream_t kind shares (TCP, pipe, TTY): reads
 * into shim-owned buffers, writes that try the socket first, shutdown, and
 * the listening side (accepting connections into new handles). */
#include <stdlib.h>
#include <string.h>

#include "stream.h"

static uint64_t uvev__id_of(void *h) { return (uint64_t)(uintptr_t)((uv_handle_t *)h)->data; }

static uvev_loop *uvev__sloop(void *h) { return uvev__loop_of((uv_handle_t *)h); }

/* A read buffer comes from the loop's pool (uvev__buf_get: malloc'd when
 * the pool is empty), before each read libuv tries, on the loop goroutine's
 * thread inside uv_run. It goes back (uvev__buf_put) in uvev__on_read when
 * the read brought no bytes; otherwise it is the UVEV_DONE_READ record's
 * payload, given back by the next turn's release or, when Go took it, by Go
 * through uvev_release once it has consumed the bytes (always before the
 * loop is freed: closing an IO releases what it kept). A failed malloc
 * gives libuv an empty buffer, which it reports as UV_ENOBUFS. */
static void uvev__on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
  (void)suggested;
  char *p = uvev__buf_get(uvev__sloop(h));
  *buf = uv_buf_init(p, p == NULL ? 0 : UVEV_BUF_SIZE);
}

static void uvev__on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf) {
  if (nread == 0) { /* EAGAIN: nothing read */
    uvev__buf_put(buf->base);
    return;
  }
  uvev_completion *c = uvev__push(uvev__sloop(s), uvev__id_of(s), UVEV_DONE_READ, nread < 0 ? (int32_t)nread : 0);
  if (nread < 0) { /* UV_EOF or an error */
    uvev__buf_put(buf->base);
    return;
  }
  c->n = (int64_t)nread;
  c->data = buf->base;
  c->release = uvev__buf_put;
}

int uvev_stream_read_start(uintptr_t h) {
  return uv_read_start((uv_stream_t *)h, uvev__on_alloc, uvev__on_read);
}

int uvev_stream_read_stop(uintptr_t h) { return uv_read_stop((uv_stream_t *)h); }

/* Returns the bytes the socket took at once, or UV_EAGAIN, or an error. */
int uvev_stream_try_write(uintptr_t h, const char *p, size_t n) {
  uv_buf_t b = uv_buf_init((char *)p, (unsigned int)n);
  return uv_try_write((uv_stream_t *)h, &b, 1);
}

/* A queued write owns a copy of its bytes. */
typedef struct {
  uv_write_t req;
  size_t n;
  char data[];
} uvev__write;

/* Frees the write request (with its copy of the bytes) on the loop thread,
 * inside uv_run: libuv calls this exactly once per accepted write, with
 * UV_ECANCELED when the stream is closed first, always before the stream's
 * close callback (so req->handle is still valid here). */
static void uvev__on_write(uv_write_t *req, int status) {
  uvev__write *w = (uvev__write *)req;
  uvev_loop *l = uvev__sloop(req->handle);
  uvev_completion *c = uvev__push(l, uvev__id_of(req->handle), UVEV_DONE_WRITE, status);
  c->n = (int64_t)w->n;
  l->reqs--;
  free(w);
}

/* Malloc'd here with a copy of p (Go's memory is not kept past the call);
 * freed by uvev__on_write, or here when uv_write refuses it. The record
 * carries the stream's id: writes complete in the order they were queued. */
int uvev_stream_write(uvev_loop *l, uintptr_t h, const char *p, size_t n) {
  uvev__write *w = malloc(sizeof *w + n);
  if (w == NULL) return UV_ENOMEM;
  memcpy(w->data, p, n);
  w->n = n;
  uv_buf_t b = uv_buf_init(w->data, (unsigned int)n);
  int err = uv_write(&w->req, (uv_stream_t *)h, &b, 1, uvev__on_write);
  if (err != 0) {
    free(w);
    return err;
  }
  l->reqs++;
  return 0;
}

/* Frees the request on the loop thread: called once, UV_ECANCELED when the
 * stream closed first, before the stream's close callback. */
static void uvev__on_shutdown(uv_shutdown_t *req, int status) {
  uvev_loop *l = uvev__sloop(req->handle);
  uvev__push(l, uvev__id_of(req->handle), UVEV_DONE_SHUTDOWN, status);
  l->reqs--;
  free(req);
}

/* Malloc'd here; freed by uvev__on_shutdown, or here when refused. */
int uvev_stream_shutdown(uvev_loop *l, uintptr_t h) {
  uv_shutdown_t *req = malloc(sizeof *req);
  if (req == NULL) return UV_ENOMEM;
  int err = uv_shutdown(req, (uv_stream_t *)h, uvev__on_shutdown);
  if (err != 0) {
    free(req);
    return err;
  }
  l->reqs++;
  return 0;
}

size_t uvev_stream_queued(uintptr_t h) { return ((uv_stream_t *)h)->write_queue_size; }

/* An accepted handle gets the id of the event Go made for it. */
void uvev_stream_set_id(uintptr_t h, uint64_t id) { ((uv_handle_t *)h)->data = (void *)(uintptr_t)id; }

/* The close callback of a handle that was never adopted (its accept failed):
 * it was not counted, so it is only freed. */
static void uvev__free_unadopted(uv_handle_t *h) { free(h); }

/* The release of a connection record Go did not take: the accepted handle
 * is closed, and uvev__on_close frees it (its record carries id 0, which no
 * event has). */
static void uvev__discard(void *h) { uv_close((uv_handle_t *)h, uvev__on_close); }

/* uvev__accept takes the connection libuv holds into a new handle of the
 * server's type and reports it. The handle is malloc'd here and counted; it
 * is the record's payload: Go takes it and makes an event of it (its close
 * callback, uvev__on_close, frees it), or the turn's release closes it. */
static void uvev__accept(uvev__server *s) {
  uv_stream_t *server = (uv_stream_t *)&s->u;
  uvev_loop *l = uvev__sloop(server);
  uv_stream_t *c;
  int err;
  if (server->type == UV_TCP) {
    c = malloc(sizeof(uv_tcp_t));
    err = c == NULL ? UV_ENOMEM : uv_tcp_init(&l->loop, (uv_tcp_t *)c);
  } else {
    c = malloc(sizeof(uv_pipe_t));
    err = c == NULL ? UV_ENOMEM : uv_pipe_init(&l->loop, (uv_pipe_t *)c, 0);
  }
  if (err != 0) { /* libuv keeps the connection: a later Start retries */
    free(c);
    s->pending = 1;
    uvev__push(l, uvev__id_of(server), UVEV_DONE_CONNECTION, err);
    return;
  }
  err = uv_accept(server, c);
  if (err != 0) {
    uv_close((uv_handle_t *)c, uvev__free_unadopted);
    uvev__push(l, uvev__id_of(server), UVEV_DONE_CONNECTION, err);
    return;
  }
  if (server->type == UV_TCP) uv_tcp_nodelay((uv_tcp_t *)c, 1); /* as Go's net does */
  c->data = NULL;
  l->handles++;
  uvev_completion *rec = uvev__push(l, uvev__id_of(server), UVEV_DONE_CONNECTION, 0);
  rec->data = c;
  rec->release = uvev__discard;
}

/* A stopped listener leaves the connection in libuv, which stops watching
 * the socket until it is accepted: the kernel's backlog holds the rest.
 * Errors (UV_EMFILE: libuv accepted and dropped the connection to keep the
 * socket from spinning) are reported and listening goes on. */
static void uvev__on_connection(uv_stream_t *server, int status) {
  uvev__server *s = (uvev__server *)server;
  if (status < 0) {
    uvev__push(uvev__sloop(server), uvev__id_of(server), UVEV_DONE_CONNECTION, status);
    return;
  }
  if (s->paused) {
    s->pending = 1;
    return;
  }
  uvev__accept(s);
}

/* Listens the first time; later, takes the connection left pending while
 * stopped (uv_accept makes libuv watch the socket again). */
int uvev_listener_start(uintptr_t h, int backlog) {
  uvev__server *s = (uvev__server *)h;
  s->paused = 0;
  if (!s->listening) {
    int err = uv_listen((uv_stream_t *)&s->u, backlog, uvev__on_connection);
    if (err != 0) return err;
    s->listening = 1;
    return 0;
  }
  if (s->pending) {
    s->pending = 0;
    uvev__accept(s);
  }
  return 0;
}

void uvev_listener_stop(uintptr_t h) { ((uvev__server *)h)->paused = 1; }
