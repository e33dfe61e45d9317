/* dns.c — the dns kinds: uv_getaddrinfo and uv_getnameinfo on libuv's
 * thread pool. Each callback copies the answer into one flat, malloc'd
 * payload (an array of uvev_addr; "host\0service\0"), frees what libuv gave
 * (uv_freeaddrinfo) and the request, and appends the record. The payload
 * is released after the next turn (free), Go having copied it during the
 * record's delivery. */
#include <netdb.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "dns.h"
#include "fs.h"

typedef struct {
  uv_getaddrinfo_t req;
  uint64_t id;
} uvev__gai;

typedef struct {
  uv_getnameinfo_t req;
  uint64_t id;
} uvev__gni;

static uvev_loop *uvev__req_loop(uv_loop_t *loop) {
  return (uvev_loop *)((char *)loop - offsetof(uvev_loop, loop));
}

/* uvev__dns_done appends a lookup's record with its payload (freed by
 * the turn after the record's) and counts the request as over. */
static void uvev__dns_done(uvev_loop *l, uint64_t id, int32_t kind, int status, void *payload, size_t n) {
  uvev_completion *c = uvev__push(l, id, kind, status);
  c->n = (int64_t)n;
  if (payload != NULL) {
    c->data = payload;
    c->release = free;
  }
  l->reqs--;
}

/* The payload is malloc'd here, on the loop thread inside uv_run, and freed
 * by the turn after the record's (uvev__release_turn calls free). */
static void uvev__on_getaddrinfo(uv_getaddrinfo_t *req, int status, struct addrinfo *res) {
  uvev__gai *g = (uvev__gai *)req;
  uvev_loop *l = uvev__req_loop(req->loop);
  size_t n = 0;
  for (struct addrinfo *ai = res; ai != NULL; ai = ai->ai_next)
    if (ai->ai_family == AF_INET || ai->ai_family == AF_INET6) n++;
  uvev_addr *out = NULL;
  if (status == 0 && n > 0) {
    out = calloc(n, sizeof *out);
    if (out == NULL) {
      status = UV_EAI_MEMORY;
      n = 0;
    }
  }
  size_t i = 0;
  for (struct addrinfo *ai = res; out != NULL && ai != NULL; ai = ai->ai_next) {
    uvev_addr *a = &out[i];
    if (ai->ai_family == AF_INET) {
      struct sockaddr_in *sin = (struct sockaddr_in *)ai->ai_addr;
      memcpy(a->addr, &sin->sin_addr, 4);
      a->port = ntohs(sin->sin_port);
    } else if (ai->ai_family == AF_INET6) {
      struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ai->ai_addr;
      memcpy(a->addr, &sin6->sin6_addr, 16);
      a->port = ntohs(sin6->sin6_port);
      a->zone = sin6->sin6_scope_id;
    } else {
      continue;
    }
    a->family = ai->ai_family;
    a->socktype = ai->ai_socktype;
    a->protocol = ai->ai_protocol;
    i++;
  }
  uv_freeaddrinfo(res);
  uvev__dns_done(l, g->id, UVEV_DONE_ADDRINFO, status, out, n);
  free(g);
}

/* uvev__cstr copies a string Go passed as bytes and a length into buf, with
 * its NUL; NULL for an empty one. */
static const char *uvev__cstr(char *buf, size_t cap, const char *s, size_t n) {
  if (n == 0) return NULL;
  memcpy(buf, s, n < cap ? n : cap - 1);
  buf[n < cap ? n : cap - 1] = '\0';
  return buf;
}

/* The request is malloc'd here and freed by uvev__on_getaddrinfo, on the
 * loop thread, which libuv calls exactly once (with UV_EAI_CANCELED when
 * uv_cancel got it first). node and service are Go bytes (not
 * NUL-terminated), copied here; libuv copies them again, and the hints. */
intptr_t uvev_getaddrinfo(uvev_loop *l, uint64_t id, const char *node, size_t nlen, const char *service,
                          size_t slen, int family, int socktype, int flags) {
  char nbuf[NI_MAXHOST], sbuf[NI_MAXSERV];
  if (nlen >= sizeof nbuf || slen >= sizeof sbuf) return UV_EINVAL;
  uvev__gai *g = malloc(sizeof *g);
  if (g == NULL) return UV_ENOMEM;
  g->id = id;
  struct addrinfo hints;
  memset(&hints, 0, sizeof hints);
  hints.ai_family = family;
  hints.ai_socktype = socktype;
  hints.ai_flags = flags;
  sigset_t mask; /* the pool's threads block SIGPIPE: see fs.c */
  int entered = uvev__pool_enter(&mask);
  int err = uv_getaddrinfo(&l->loop, &g->req, uvev__on_getaddrinfo, uvev__cstr(nbuf, sizeof nbuf, node, nlen),
                           uvev__cstr(sbuf, sizeof sbuf, service, slen), &hints);
  uvev__pool_leave(entered, &mask, err);
  if (err != 0) {
    free(g);
    return err;
  }
  l->reqs++;
  return (intptr_t)g;
}

/* The payload "host\0service\0" is malloc'd here and freed by the turn
 * after the record's; n is its length. */
static void uvev__on_getnameinfo(uv_getnameinfo_t *req, int status, const char *host, const char *service) {
  uvev__gni *g = (uvev__gni *)req;
  uvev_loop *l = uvev__req_loop(req->loop);
  char *out = NULL;
  size_t n = 0;
  if (status == 0) {
    if (host == NULL) host = "";
    if (service == NULL) service = "";
    size_t hn = strlen(host), sn = strlen(service);
    n = hn + 1 + sn + 1;
    out = malloc(n);
    if (out == NULL) {
      status = UV_EAI_MEMORY;
      n = 0;
    } else {
      memcpy(out, host, hn + 1);
      memcpy(out + hn + 1, service, sn + 1);
    }
  }
  uvev__dns_done(l, g->id, UVEV_DONE_NAMEINFO, status, out, n);
  free(g);
}

/* Malloc'd here; freed by uvev__on_getnameinfo (see above). The address
 * comes as two big-endian halves (the first 4 bytes of hi for AF_INET);
 * libuv copies the sockaddr. */
intptr_t uvev_getnameinfo(uvev_loop *l, uint64_t id, int family, uint64_t hi, uint64_t lo, int port,
                          uint32_t zone, int flags) {
  uint8_t addr[16];
  for (int i = 0; i < 8; i++) {
    addr[i] = (uint8_t)(hi >> (56 - 8 * i));
    addr[8 + i] = (uint8_t)(lo >> (56 - 8 * i));
  }
  struct sockaddr_storage ss;
  memset(&ss, 0, sizeof ss);
  if (family == AF_INET) {
    struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
    sin->sin_family = AF_INET;
    sin->sin_port = htons((uint16_t)port);
    memcpy(&sin->sin_addr, addr, 4);
  } else if (family == AF_INET6) {
    struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;
    sin6->sin6_family = AF_INET6;
    sin6->sin6_port = htons((uint16_t)port);
    sin6->sin6_scope_id = zone;
    memcpy(&sin6->sin6_addr, addr, 16);
  } else {
    return UV_EAI_FAMILY;
  }
  uvev__gni *g = malloc(sizeof *g);
  if (g == NULL) return UV_ENOMEM;
  g->id = id;
  sigset_t mask; /* the pool's threads block SIGPIPE: see fs.c */
  int entered = uvev__pool_enter(&mask);
  int err = uv_getnameinfo(&l->loop, &g->req, uvev__on_getnameinfo, (const struct sockaddr *)&ss, flags);
  uvev__pool_leave(entered, &mask, err);
  if (err != 0) {
    free(g);
    return err;
  }
  l->reqs++;
  return (intptr_t)g;
}

/* Valid only while the request is in flight (Go tracks that). */
int uvev_dns_cancel(uintptr_t req) { return uv_cancel((uv_req_t *)req); }
