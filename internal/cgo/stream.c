/* stream.c — what every uv_stream_t kind shares (TCP, pipe, TTY): reads
 * into shim-owned buffers, writes that try the socket first, shutdown, and
 * the listening side (accepting connections into new handles). */
#define _GNU_SOURCE /* accept4 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "stream.h"
#include "udp.h"

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

/* Tries the batch's writes in order, each as uvev_stream_try_write does
 * (UV_EAGAIN reads as 0 bytes taken). A try whose stream's previous try in
 * the batch did not go out whole (short, or failed) is not made: its res
 * is 0, so that no byte of it passes the rest of the one before, which Go
 * queues first. Go's memory (buf, t) is not kept past the call. */
void uvev_stream_try_batch(const char *buf, uvev_try *t, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (t[i].prev >= 0 && t[t[i].prev].res != (int64_t)t[t[i].prev].n) {
      t[i].res = 0;
      continue;
    }
    int r = uvev_stream_try_write(t[i].h, buf + t[i].off, (size_t)t[i].n);
    t[i].res = r == UV_EAGAIN ? 0 : r;
  }
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
 * close callback (so req->handle is still valid here). The record's n is
 * the request's size; a failed one's aux the bytes of it the kernel took
 * before the failure: libuv advances a request's buffer in place as each
 * write(2) takes its bytes (uv__write_req_update), in the request's own
 * bufsml when it has four buffers or fewer (this one has one), which it
 * neither moves nor frees before this call (UV_WRITE_PRIVATE_FIELDS). */
static void uvev__on_write(uv_write_t *req, int status) {
  uvev__write *w = (uvev__write *)req;
  uvev_loop *l = uvev__sloop(req->handle);
  uvev_completion *c = uvev__push(l, uvev__id_of(req->handle), UVEV_DONE_WRITE, status);
  c->n = (int64_t)w->n;
  if (status < 0) {
    const char *at = req->bufsml[0].base;
    if (at >= w->data && at <= w->data + w->n) c->aux = (int64_t)(at - w->data);
  }
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

/* The close callback of a connection handle that was never adopted (the
 * listener's spare, or one whose open failed): it was not counted, so it is
 * only freed. */
static void uvev__free_unadopted(uv_handle_t *h) { free(h); }

/* The release of a connection record Go did not take: the accepted handle
 * is closed, and uvev__on_close frees it (its record carries id 0, which no
 * event has). */
static void uvev__discard(void *h) { uv_close((uv_handle_t *)h, uvev__on_close); }

/* At most this many connections are accepted per readiness report (fewer
 * when the listener's batch is smaller): the socket is level-triggered, so
 * the rest wait for the next turn, after the loop's other work. */
#define UVEV_ACCEPT_BATCH 128

/* uvev__pause stops watching the socket after a failed accept and reports
 * the error: Go backs off and starts watching again (uvev_listener_start),
 * so a failure that lasts (EMFILE) costs one accept per pause, never a
 * spin. The connection waits in the kernel's backlog meanwhile. */
static void uvev__pause(uvev__server *s, int err) {
  uv_poll_stop(&s->poll);
  uvev__push(uvev__sloop(&s->poll), uvev__id_of(&s->poll), UVEV_DONE_CONNECTION, err);
}

/* uvev__accepted is an accepted TCP connection left unopened in libuv: its
 * descriptor and the peer's address as accept4(2) gave it (RemoteAddr needs
 * no getpeername(2), and still has the address once the peer has reset the
 * connection). It is the connection record's payload: Go takes it
 * (uvev_accepted_take, which frees it) and serves the socket through its
 * lanes, opening a uv_tcp_t for it only when it needs libuv
 * (uvev_tcp_open_fd); a record nobody took is released by
 * uvev__discard_accepted, which closes the descriptor. No handle: no
 * uv_tcp_t, no ioctl(FIONBIO) (accept4 made it non-blocking), no
 * EPOLL_CTL_DEL at its close. */
typedef struct {
  int fd;
  union { /* a TCP peer's: IPv4 or IPv6, 28 bytes, not a sockaddr_storage's 128 */
    struct sockaddr sa;
    struct sockaddr_in in4;
    struct sockaddr_in6 in6;
  } peer;
} uvev__accepted;

/* The release of an accepted TCP connection's record Go did not take. */
static void uvev__discard_accepted(void *p) {
  uvev__accepted *a = p;
  close(a->fd);
  free(a);
}

/* Takes an accepted TCP connection's record payload p: its descriptor, now
 * the caller's, and the peer's address (UV_EAFNOSUPPORT when accept4 gave
 * none; the descriptor is the caller's all the same). Frees p. */
int uvev_accepted_take(uintptr_t p, int *fd, uint8_t *ip, int *iplen, int *port, uint32_t *scope) {
  uvev__accepted *a = (uvev__accepted *)p;
  struct sockaddr_storage ss;
  memset(&ss, 0, sizeof ss);
  memcpy(&ss, &a->peer, sizeof a->peer);
  *fd = a->fd;
  free(a);
  return uvev_sockaddr_parse(&ss, ip, iplen, port, scope);
}

/* Opens fd, a connected TCP socket, in a new uv_tcp_t reporting for id:
 * the handle of a connection accepted unopened (uvev__accepted), made when
 * it first needs libuv. On success the handle owns fd (its close closes
 * it); on failure fd is still the caller's. Malloc'd here; freed by
 * uvev__on_close. */
int uvev_tcp_open_fd(uvev_loop *l, uint64_t id, int fd, uintptr_t *out) {
  uv_tcp_t *h = malloc(sizeof *h);
  if (h == NULL) return UV_ENOMEM;
  int err = uv_tcp_init(&l->loop, h);
  if (err != 0) {
    free(h);
    return err;
  }
  err = uv_tcp_open(h, fd);
  if (err != 0) {
    uv_close((uv_handle_t *)h, uvev__free_unadopted); /* no descriptor: closes none */
    return err;
  }
  return uvev__adopt(l, (uv_handle_t *)h, 0, id, out);
}

/* uvev__spare makes what the next connection goes into, before the
 * accept: for a Unix socket its handle, for TCP its uvev__accepted record;
 * an allocation or init that fails (ENOMEM) leaves the connection in the
 * backlog for the next try, rather than dropping it. Malloc'd here; a
 * spare never used is freed by uvev__free_spare when the listener closes;
 * a handle adopted, by uvev__on_close; a record, by its taker. */
static int uvev__spare(uvev__server *s) {
  uvev_loop *l = uvev__sloop(&s->poll);
  int err = 0;
  if (s->spare != NULL) return 0;
  if (s->pipe) {
    uv_pipe_t *c = malloc(sizeof *c);
    err = c == NULL ? UV_ENOMEM : uv_pipe_init(&l->loop, c, 0);
    if (err != 0) {
      free(c);
      return err;
    }
    s->spare = c;
  } else {
    s->spare = malloc(sizeof(uvev__accepted));
    if (s->spare == NULL) return UV_ENOMEM;
  }
  return 0;
}

/* Frees a listener's spare, never used. */
static void uvev__free_spare(uvev__server *s) {
  if (s->spare == NULL) return;
  if (s->pipe) uv_close((uv_handle_t *)s->spare, uvev__free_unadopted);
  else free(s->spare);
  s->spare = NULL;
}

/* uvev__on_listen accepts the connections waiting with accept4(2), instead
 * of libuv's uv_listen: libuv's own accept loop, once its reserve
 * descriptor is lost at EMFILE, calls back and retries without end inside
 * uv_run. Each connection is a record: a TCP one's payload is its
 * descriptor with the peer's address (uvev__accepted), left unopened in
 * libuv, which Go takes (uvev_accepted_take); a Unix one's is a uv_pipe_t
 * it is opened in (uv_pipe_open), counted from here on, of which Go makes
 * an event (its close callback, uvev__on_close, frees it). A record Go did
 * not take is released after the turn: its descriptor or handle closed. */
static void uvev__on_listen(uv_poll_t *p, int status, int events) {
  uvev__server *s = (uvev__server *)p;
  uvev_loop *l = uvev__sloop(p);
  (void)events;
  if (status < 0) {
    uvev__pause(s, status);
    return;
  }
  for (int i = 0; i < s->batch; i++) {
    int err = uvev__spare(s);
    if (err != 0) {
      uvev__pause(s, err);
      return;
    }
    struct sockaddr *peer = NULL;
    socklen_t peerlen = 0;
    if (!s->pipe) {
      uvev__accepted *a = s->spare;
      a->peer.sa.sa_family = AF_UNSPEC;
      peer = &a->peer.sa;
      peerlen = sizeof a->peer;
    }
    int fd = accept4(s->fd, peer, &peerlen, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue; /* as Go's net: the next one */
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      uvev__pause(s, -errno); /* libuv errors are negated errnos on Unix */
      return;
    }
    if (!s->pipe) {
      /* TCP: the connection stays unopened in libuv (uvev__accepted). */
      uvev__accepted *a = s->spare;
      s->spare = NULL;
      a->fd = fd;
      uvev_completion *rec = uvev__push(l, uvev__id_of(p), UVEV_DONE_CONNECTION, 0);
      rec->data = a;
      rec->release = uvev__discard_accepted;
      continue;
    }
    uv_stream_t *c = s->spare;
    s->spare = NULL;
    err = uv_pipe_open((uv_pipe_t *)c, fd);
    if (err != 0) {
      close(fd);
      uv_close((uv_handle_t *)c, uvev__free_unadopted);
      uvev__pause(s, err);
      return;
    }
    c->data = NULL;
    l->handles++;
    uvev_completion *rec = uvev__push(l, uvev__id_of(p), UVEV_DONE_CONNECTION, 0);
    rec->data = c;
    rec->release = uvev__discard;
  }
}

/* fd is a listening socket (listen(2) has run); the server owns it from
 * here on: uvev_listener_close closes it. batch bounds the connections
 * accepted per readiness report (to UVEV_ACCEPT_BATCH; below 1, 1): Go
 * gives its queue's bound, so a turn's batch cannot take the queue far
 * beyond it before Go stops watching. The server is malloc'd here and
 * freed in uvev__on_close after uvev_close (or by uvev__adopt when the init
 * fails, fd then still the caller's). */
int uvev_listener_new(uvev_loop *l, uint64_t id, int fd, int pipe, int batch, uintptr_t *out) {
  uvev__server *s = calloc(1, sizeof *s);
  if (s == NULL) return UV_ENOMEM;
  s->fd = fd;
  s->pipe = pipe;
  s->batch = batch < 1 ? 1 : batch > UVEV_ACCEPT_BATCH ? UVEV_ACCEPT_BATCH : batch;
  int err = uvev__adopt(l, (uv_handle_t *)&s->poll, uv_poll_init(&l->loop, &s->poll, fd), id, out);
  if (err != 0) return err;
  s->next = l->servers;
  if (s->next != NULL) s->next->prev = s;
  l->servers = s;
  return 0;
}

/* Watches the socket: connections are accepted from the next turn on. */
int uvev_listener_start(uintptr_t h) {
  uvev__server *s = (uvev__server *)h;
  return uv_poll_start(&s->poll, UV_READABLE, uvev__on_listen);
}

/* Stops watching: the kernel's backlog holds new connections. */
void uvev_listener_stop(uintptr_t h) { uv_poll_stop(&((uvev__server *)h)->poll); }

/* Before the server's uvev_close: stops watching (epoll forgets the
 * descriptor while it is still open), closes the spare handle and the
 * socket, and takes the server off the loop's list. Once is enough; a
 * second call does nothing. */
void uvev_listener_close(uintptr_t h) {
  uvev__server *s = (uvev__server *)h;
  uv_poll_stop(&s->poll);
  uvev__free_spare(s);
  if (s->fd >= 0) {
    uvev_loop *l = uvev__sloop(&s->poll);
    if (s->prev != NULL) s->prev->next = s->next;
    else l->servers = s->next;
    if (s->next != NULL) s->next->prev = s->prev;
    s->prev = s->next = NULL;
    close(s->fd);
    s->fd = -1;
  }
}

/* The loop of a reactor dropped without Close closes its handles with
 * uv_close alone (uvev_loop_close_all), which would leave a listener's
 * socket open and close its spare handle as a counted one: each listener
 * still open is closed as Close would, first. */
void uvev__listeners_close(uvev_loop *l) {
  while (l->servers != NULL) uvev_listener_close((uintptr_t)l->servers);
}

/* uvev__reset closes the stream at once and returns the bytes its queue
 * still held, which are dropped: a TCP stream is reset (uv_tcp_close_reset,
 * SO_LINGER 0 then close: the peer reads ECONNRESET, never a clean end), any
 * other is only closed (a Unix socket or a pipe has no reset). uv.h forbids
 * uv_tcp_close_reset once a uv_shutdown is queued (UV_EINVAL): the option is
 * then set here, as uv_tcp_close_reset would have. */
static int64_t uvev__reset(uv_stream_t *s) {
  int64_t dropped = (int64_t)s->write_queue_size;
  if (s->type == UV_TCP) {
    if (uv_tcp_close_reset((uv_tcp_t *)s, uvev__on_close) == 0) return dropped;
    uv_os_fd_t fd;
    if (uv_fileno((uv_handle_t *)s, &fd) == 0) {
      struct linger lg = {1, 0};
      setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
    }
  }
  uv_close((uv_handle_t *)s, uvev__on_close);
  return dropped;
}

/* Closes h now, with a reset for TCP (uvev__reset); returns the bytes of
 * its queue dropped. */
int64_t uvev_stream_reset(uintptr_t h) { return uvev__reset((uv_stream_t *)h); }

/* A lingering close: a stream Go has closed whose queued writes still go
 * out. Go closes the stream once its last write completed (uvev_linger_end);
 * the timer resets it when timeout_ms pass first and pushes a
 * UVEV_LINGER_RESET record for the stream. The timer is the first member:
 * the struct is one handle, counted (so the loop's close waits for it) with
 * id 0 (its close record names no event), closed only by uvev_linger_end and
 * freed by uvev__on_close. */
typedef struct {
  uv_timer_t timer;
  uv_stream_t *s;
  int closed;      /* the stream is closing: the timer reset it, or Go ended it */
  int timed_out;   /* the timer reset it */
  int64_t dropped; /* the bytes the timer's reset dropped */
} uvev__linger;

static void uvev__on_linger(uv_timer_t *t) {
  uvev__linger *g = (uvev__linger *)t;
  if (g->closed) return;
  g->closed = 1;
  g->timed_out = 1;
  uint64_t id = uvev__id_of(g->s);
  g->dropped = uvev__reset(g->s);
  uvev_completion *c = uvev__push(uvev__sloop(t), id, UVEV_DONE_SHUTDOWN, UV_ETIMEDOUT);
  c->n = g->dropped;
  c->aux = UVEV_LINGER_RESET;
}

/* Starts the lingering close of h, whose handle Go no longer closes itself:
 * its writes go on, and so does reading, whose records a closed event
 * ignores (what the peer sends is read and dropped, so that the close is
 * not a reset for unread bytes, and a peer blocked writing to us may get to
 * reading). On failure h is closed as uvev_close would. */
int uvev_linger_start(uvev_loop *l, uintptr_t h, uint64_t timeout_ms, uintptr_t *out) {
  uvev__linger *g = malloc(sizeof *g);
  int err = g == NULL ? UV_ENOMEM : uv_timer_init(&l->loop, &g->timer);
  if (err == 0) err = uvev__adopt(l, (uv_handle_t *)&g->timer, 0, 0, out);
  else free(g);
  if (err != 0) {
    uv_close((uv_handle_t *)h, uvev__on_close);
    return err;
  }
  g->s = (uv_stream_t *)h;
  g->closed = 0;
  g->timed_out = 0;
  g->dropped = 0;
  uv_read_start(g->s, uvev__on_alloc, uvev__on_read);
  uv_timer_start(&g->timer, uvev__on_linger, timeout_ms, 0);
  return 0;
}

/* Ends the lingering close g, once, from Go: the stream closes (reset when
 * reset is set: an Abort, a failed write) unless the timer reset it first,
 * and the timer closes. Returns the bytes of the stream's queue dropped;
 * *timed_out says the timer had reset the stream, and the bytes are those
 * its reset dropped (its record, which may still be on its way to Go when
 * an Abort ends the linger in the same turn, tells them too). */
int64_t uvev_linger_end(uintptr_t p, int reset, int *timed_out) {
  uvev__linger *g = (uvev__linger *)p;
  int64_t n = g->dropped;
  *timed_out = g->timed_out;
  if (!g->closed) {
    g->closed = 1;
    if (reset) {
      n = uvev__reset(g->s);
    } else {
      n = (int64_t)g->s->write_queue_size;
      uv_close((uv_handle_t *)g->s, uvev__on_close);
    }
  }
  uv_timer_stop(&g->timer);
  uv_close((uv_handle_t *)&g->timer, uvev__on_close);
  return n;
}

#ifdef UVEV_FAULTS
/* Fires the lingering close g's timer now, as if its time had passed: the
 * stream is reset and the record pushed, to be taken by Go's next turn. */
void uvev_fault_linger_fire(uintptr_t p) {
  uvev__linger *g = (uvev__linger *)p;
  uv_timer_stop(&g->timer);
  uvev__on_linger(&g->timer);
}
#endif
