/* udp.c — uv_udp_t: datagrams in (with the sender's address) and out. */
#include <stdlib.h>
#include <string.h>

#include "udp.h"

/* The handle is malloc'd here and freed in uvev__on_close, on the loop
 * thread, after the kind's uv_close; or by uvev__adopt when the init fails.
 * family AF_INET or AF_INET6 creates the socket now. Receives are batched
 * (UV_UDP_RECVMMSG: one recvmmsg(2) reads up to UVEV_MMSG_CHUNKS datagrams)
 * where the kernel has recvmmsg. */
/* A UDP handle and what its batched receive keeps between libuv's calls:
 * got, the datagrams of the batch being delivered; drained, the loop's
 * run in which a batch came short of its chunks (the socket had no more),
 * so that the next allocation of this readiness pass ends the pass (see
 * uvev__on_udp_alloc) instead of letting libuv call recvmmsg once more
 * only to find nothing; a pass libuv ended itself (after its budget of 32
 * datagrams) leaves a mark of an earlier run, which the next pass ignores;
 * ended marks that allocation's UV_ENOBUFS, which is no error. The handle
 * is the first member: the struct is freed as the handle. */
typedef struct {
  uv_udp_t h;
  int got, ended;
  uint64_t drained; /* the loop's run (uvev_loop.runs) a short batch was read in; 0: none */
} uvev__udp;

int uvev_udp_new(uvev_loop *l, uint64_t id, int family, uintptr_t *out) {
  uvev__udp *u = calloc(1, sizeof *u);
  if (u == NULL) return UV_ENOMEM;
  return uvev__adopt(l, (uv_handle_t *)&u->h, uv_udp_init_ex(&l->loop, &u->h, (unsigned int)family | UV_UDP_RECVMMSG), id, out);
}

int uvev_udp_bind(uintptr_t h, const uint8_t *ip, int iplen, int port, uint32_t scope, unsigned int flags) {
  struct sockaddr_storage ss;
  int err = uvev_sockaddr_make(&ss, ip, iplen, port, scope);
  if (err != 0) return err;
  return uv_udp_bind((uv_udp_t *)h, (struct sockaddr *)&ss, flags);
}

/* A datagram lands in a pooled buffer (uvev__buf_get, UVEV_BUF_SIZE) after
 * the room for its sender's address (uvev_dgram). The buffer goes back to
 * the pool in uvev__on_recv when nothing came; otherwise it is the record's
 * payload, given back by the next turn's release (or by Go when it took
 * it). A batched handle instead gets its loop's block of UVEV_MMSG_CHUNKS
 * chunks of UV's 64 KiB for a recvmmsg (uvev_loop.mmsg_block, malloc'd
 * once): each datagram is copied out of it into a record of its own
 * (uvev__on_mmsg_chunk) before libuv's call returns, and the block stays
 * with the loop. Loop thread, inside uv_run. */
static void uvev__on_udp_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
  (void)suggested;
  if (uv_udp_using_recvmmsg((uv_udp_t *)h)) {
    uvev__udp *u = (uvev__udp *)h;
    uvev_loop *l = uvev__loop_of(h);
    if (u->drained == l->runs) { /* a batch of this run emptied the socket: end libuv's pass here */
      u->drained = 0;
      u->ended = 1;
      *buf = uv_buf_init(NULL, 0);
      return;
    }
    u->drained = 0; /* left by a pass libuv ended itself (its budget of datagrams): not this one's */
    if (l->mmsg_block == NULL && (l->mmsg_block = malloc(UVEV_MMSG_CHUNKS * UVEV_BUF_SIZE)) != NULL) l->mmsg_blocks++;
    *buf = uv_buf_init(l->mmsg_block, l->mmsg_block == NULL ? 0 : UVEV_MMSG_CHUNKS * UVEV_BUF_SIZE);
    return;
  }
  char *p = uvev__buf_get(uvev__loop_of(h));
  if (p == NULL) {
    *buf = uv_buf_init(NULL, 0);
    return;
  }
  *buf = uv_buf_init(p + offsetof(uvev_dgram, bytes), UVEV_BUF_SIZE - offsetof(uvev_dgram, bytes));
}

/* One datagram of a batch: copied, with its sender, into memory of its own
 * that the record carries (freed by the release, or by Go once taken).
 * It is copied whole: a chunk is libuv's 64 KiB, which every UDP datagram
 * fits (65,507 bytes over IPv4, 65,527 over IPv6), as the pure-Go
 * driver's buffers do (udp_go.go's udpBufSize). Only the unbatched path,
 * where the kernel has no recvmmsg (never on Linux), cuts a datagram at
 * the room its pooled buffer leaves after the sender's address. */
static void uvev__on_mmsg_chunk(uv_udp_t *h, ssize_t nread, const uv_buf_t *buf, const struct sockaddr *addr, unsigned flags) {
  uvev_loop *l = uvev__loop_of((uv_handle_t *)h);
  ((uvev__udp *)h)->got++;
  size_t n = (size_t)nread < buf->len ? (size_t)nread : buf->len;
  uvev_dgram *d = malloc(offsetof(uvev_dgram, bytes) + n);
  if (d == NULL) {
    uvev__push(l, (uint64_t)(uintptr_t)h->data, UVEV_DONE_UDP_RECV, UV_ENOBUFS);
    return;
  }
  memset(&d->from, 0, sizeof d->from);
  memcpy(&d->from, addr, addr->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in));
  memcpy(d->bytes, buf->base, n);
  uvev_completion *c = uvev__push(l, (uint64_t)(uintptr_t)h->data, UVEV_DONE_UDP_RECV, 0);
  c->n = (int64_t)n;
  c->aux = (flags & UV_UDP_PARTIAL) || (size_t)nread > n ? 1 : 0;
  c->data = d;
  c->release = free;
}

static void uvev__on_recv(uv_udp_t *h, ssize_t nread, const uv_buf_t *buf, const struct sockaddr *addr, unsigned flags) {
  if (flags & UV_UDP_MMSG_CHUNK) {
    uvev__on_mmsg_chunk(h, nread, buf, addr, flags);
    return;
  }
  char *base;
  if (uv_udp_using_recvmmsg(h)) { /* the batch's end, nothing to read, or an error: the block is the loop's */
    uvev__udp *u = (uvev__udp *)h;
    if (flags & UV_UDP_MMSG_FREE) { /* the batch's end: a short one emptied the socket */
      u->drained = u->got < UVEV_MMSG_CHUNKS ? uvev__loop_of((uv_handle_t *)h)->runs : 0;
      u->got = 0;
      return;
    }
    if (u->ended && nread == UV_ENOBUFS && buf->len == 0) { /* the pass ended by uvev__on_udp_alloc */
      u->ended = 0;
      return;
    }
    u->got = 0;
    base = NULL;
  } else {
    base = buf->base == NULL ? NULL : buf->base - offsetof(uvev_dgram, bytes);
  }
  if (nread == 0 && addr == NULL) { /* nothing to read */
    uvev__buf_put(base);
    return;
  }
  uvev_loop *l = uvev__loop_of((uv_handle_t *)h);
  uvev_completion *c = uvev__push(l, (uint64_t)(uintptr_t)h->data, UVEV_DONE_UDP_RECV, nread < 0 ? (int32_t)nread : 0);
  if (nread < 0 || base == NULL) {
    uvev__buf_put(base);
    return;
  }
  uvev_dgram *d = (uvev_dgram *)base;
  memset(&d->from, 0, sizeof d->from);
  memcpy(&d->from, addr, addr->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in));
  c->n = (int64_t)nread;
  c->aux = (flags & UV_UDP_PARTIAL) ? 1 : 0; /* truncated to the buffer */
  c->data = base;
  c->release = uvev__buf_put;
}

int uvev_udp_batched(uintptr_t h) { return uv_udp_using_recvmmsg((uv_udp_t *)h); }

int uvev_udp_recv_start(uintptr_t h) {
  uvev__udp *u = (uvev__udp *)h;
  u->got = u->drained = u->ended = 0;
  return uv_udp_recv_start(&u->h, uvev__on_udp_alloc, uvev__on_recv);
}

int uvev_udp_recv_stop(uintptr_t h) { return uv_udp_recv_stop((uv_udp_t *)h); }

/* Returns the bytes sent (the whole datagram), UV_EAGAIN, or an error. */
int uvev_udp_try_send(uintptr_t h, const char *p, size_t n, const uint8_t *ip, int iplen, int port, uint32_t scope) {
  struct sockaddr_storage ss;
  int err = uvev_sockaddr_make(&ss, ip, iplen, port, scope);
  if (err != 0) return err;
  uv_buf_t b = uv_buf_init((char *)p, (unsigned int)n);
  return uv_udp_try_send((uv_udp_t *)h, &b, 1, (struct sockaddr *)&ss);
}

typedef struct {
  uv_udp_send_t req;
  size_t n;
  char data[];
} uvev__udp_send;

/* Frees the request with its copy of the datagram, on the loop thread:
 * libuv calls this once, UV_ECANCELED when the handle closed first, before
 * the handle's close callback. */
static void uvev__on_udp_send(uv_udp_send_t *req, int status) {
  uvev__udp_send *s = (uvev__udp_send *)req;
  uvev_loop *l = uvev__loop_of((uv_handle_t *)req->handle);
  uvev_completion *c = uvev__push(l, (uint64_t)(uintptr_t)req->handle->data, UVEV_DONE_UDP_SEND, status);
  c->n = (int64_t)s->n;
  l->reqs--;
  free(s);
}

/* Malloc'd here with a copy of the datagram; freed by uvev__on_udp_send, or
 * here when refused. */
int uvev_udp_send(uvev_loop *l, uintptr_t h, const char *p, size_t n, const uint8_t *ip, int iplen, int port, uint32_t scope) {
  struct sockaddr_storage ss;
  int err = uvev_sockaddr_make(&ss, ip, iplen, port, scope);
  if (err != 0) return err;
  uvev__udp_send *s = malloc(sizeof *s + n);
  if (s == NULL) return UV_ENOMEM;
  memcpy(s->data, p, n);
  s->n = n;
  uv_buf_t b = uv_buf_init(s->data, (unsigned int)n);
  err = uv_udp_send(&s->req, (uv_udp_t *)h, &b, 1, (struct sockaddr *)&ss, uvev__on_udp_send);
  if (err != 0) {
    free(s);
    return err;
  }
  l->reqs++;
  return 0;
}

int uvev_udp_addr(uintptr_t h, uint8_t *ip, int *iplen, int *port, uint32_t *scope) {
  struct sockaddr_storage ss;
  int len = sizeof ss;
  int err = uv_udp_getsockname((uv_udp_t *)h, (struct sockaddr *)&ss, &len);
  if (err != 0) return err;
  return uvev_sockaddr_parse(&ss, ip, iplen, port, scope);
}

/* Socket options (uv_udp_set_*). Addresses are strings, as libuv takes
 * them: an interface is one of its IPv4 addresses, or "::%name" for IPv6;
 * NULL is any. */
int uvev_udp_option(uintptr_t h, int opt, int v) {
  uv_udp_t *u = (uv_udp_t *)h;
  switch (opt) {
  case UVEV_UDP_BROADCAST: return uv_udp_set_broadcast(u, v);
  case UVEV_UDP_TTL: return uv_udp_set_ttl(u, v);
  case UVEV_UDP_MULTICAST_TTL: return uv_udp_set_multicast_ttl(u, v);
  case UVEV_UDP_MULTICAST_LOOP: return uv_udp_set_multicast_loop(u, v);
  }
  return UV_EINVAL;
}

int uvev_udp_multicast_interface(uintptr_t h, const char *ifaddr) {
  return uv_udp_set_multicast_interface((uv_udp_t *)h, ifaddr);
}

/* join: 1 joins, 0 leaves; source NULL is any source. */
int uvev_udp_membership(uintptr_t h, const char *group, const char *ifaddr, const char *source, int join) {
  uv_membership m = join ? UV_JOIN_GROUP : UV_LEAVE_GROUP;
  if (source != NULL) return uv_udp_set_source_membership((uv_udp_t *)h, group, ifaddr, source, m);
  return uv_udp_set_membership((uv_udp_t *)h, group, ifaddr, m);
}
