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

/* The request is malloc'd here and freed by uvev__on_getaddrinfo, on the
 * loop thread, which libuv calls exactly once (with UV_EAI_CANCELED when
 * uv_cancel got it first). libuv copies node, service and hints. */
int uvev_getaddrinfo(uvev_loop *l, uint64_t id, const char *node, const char *service, int family,
                     int socktype, int flags, uintptr_t *out) {
  uvev__gai *g = malloc(sizeof *g);
  if (g == NULL) return UV_ENOMEM;
  g->id = id;
  struct addrinfo hints;
  memset(&hints, 0, sizeof hints);
  hints.ai_family = family;
  hints.ai_socktype = socktype;
  hints.ai_flags = flags;
  int err = uv_getaddrinfo(&l->loop, &g->req, uvev__on_getaddrinfo, node, service, &hints);
  if (err != 0) {
    free(g);
    return err;
  }
  l->reqs++;
  *out = (uintptr_t)g;
  return 0;
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

/* Malloc'd here; freed by uvev__on_getnameinfo (see above). libuv copies
 * the address. */
int uvev_getnameinfo(uvev_loop *l, uint64_t id, int family, const uint8_t *addr, int port, uint32_t zone,
                     int flags, uintptr_t *out) {
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
  int err = uv_getnameinfo(&l->loop, &g->req, uvev__on_getnameinfo, (const struct sockaddr *)&ss, flags);
  if (err != 0) {
    free(g);
    return err;
  }
  l->reqs++;
  *out = (uintptr_t)g;
  return 0;
}

/* Valid only while the request is in flight (Go tracks that). */
int uvev_dns_cancel(uintptr_t req) { return uv_cancel((uv_req_t *)req); }
