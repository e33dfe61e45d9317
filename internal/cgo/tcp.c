/* tcp.c — uv_tcp_t: connections (reads and writes are stream.c's, and so
 * is listening), connect and addresses. */
#include <stdlib.h>
#include <string.h>

#include "stream.h"
#include "udp.h"

/* The handle is malloc'd here and freed in uvev__on_close, on the loop
 * thread, after the kind's uv_close; or by uvev__adopt when the init fails.
 * It has no socket until connect (listeners are stream.c's). */
int uvev_tcp_new(uvev_loop *l, uint64_t id, uintptr_t *out) {
  uv_tcp_t *h = malloc(sizeof *h);
  if (h == NULL) return UV_ENOMEM;
  return uvev__adopt(l, (uv_handle_t *)h, uv_tcp_init(&l->loop, h), id, out);
}

/* Shared with udp.c (udp.h). */
int uvev_sockaddr_make(struct sockaddr_storage *ss, const uint8_t *ip, int iplen, int port, uint32_t scope) {
  memset(ss, 0, sizeof *ss);
  if (port < 0 || port > 65535) return UV_EINVAL;
  if (iplen == 4) {
    struct sockaddr_in *a = (struct sockaddr_in *)ss;
    a->sin_family = AF_INET;
    a->sin_port = htons((uint16_t)port);
    memcpy(&a->sin_addr, ip, 4);
    return 0;
  }
  if (iplen == 16) {
    struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;
    a->sin6_family = AF_INET6;
    a->sin6_port = htons((uint16_t)port);
    a->sin6_scope_id = scope;
    memcpy(&a->sin6_addr, ip, 16);
    return 0;
  }
  return UV_EINVAL;
}

/* Frees the request on the loop thread: libuv calls this once, with
 * UV_ECANCELED when the handle closed first, before its close callback. */
static void uvev__on_connect(uv_connect_t *req, int status) {
  uvev_loop *l = uvev__loop_of((uv_handle_t *)req->handle);
  uvev__push(l, (uint64_t)(uintptr_t)req->handle->data, UVEV_DONE_CONNECT, status);
  l->reqs--;
  free(req);
}

/* Malloc'd here; freed by uvev__on_connect, or here when refused. The
 * record carries the handle's id. */
int uvev_tcp_connect(uvev_loop *l, uintptr_t h, const uint8_t *ip, int iplen, int port, uint32_t scope) {
  struct sockaddr_storage ss;
  int err = uvev_sockaddr_make(&ss, ip, iplen, port, scope);
  if (err != 0) return err;
  uv_connect_t *req = malloc(sizeof *req);
  if (req == NULL) return UV_ENOMEM;
  err = uv_tcp_connect(req, (uv_tcp_t *)h, (struct sockaddr *)&ss, uvev__on_connect);
  if (err != 0) {
    free(req);
    return err;
  }
  l->reqs++;
  return 0;
}

/* Reads an IPv4 or IPv6 address: ip gets 4 or 16 bytes. Shared with
 * udp.c (udp.h). */
int uvev_sockaddr_parse(const struct sockaddr_storage *ss, uint8_t *ip, int *iplen, int *port, uint32_t *scope) {
  if (ss->ss_family == AF_INET) {
    const struct sockaddr_in *a = (const struct sockaddr_in *)ss;
    memcpy(ip, &a->sin_addr, 4);
    *iplen = 4;
    *port = ntohs(a->sin_port);
    *scope = 0;
    return 0;
  }
  if (ss->ss_family == AF_INET6) {
    const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)ss;
    memcpy(ip, &a->sin6_addr, 16);
    *iplen = 16;
    *port = ntohs(a->sin6_port);
    *scope = a->sin6_scope_id;
    return 0;
  }
  return UV_EAFNOSUPPORT;
}

/* The local (peer = 0) or remote address (peer = 1: getpeername). */
int uvev_tcp_addr(uintptr_t h, int peer, uint8_t *ip, int *iplen, int *port, uint32_t *scope) {
  struct sockaddr_storage ss;
  int len = sizeof ss;
  int err = peer ? uv_tcp_getpeername((uv_tcp_t *)h, (struct sockaddr *)&ss, &len)
                 : uv_tcp_getsockname((uv_tcp_t *)h, (struct sockaddr *)&ss, &len);
  if (err != 0) return err;
  return uvev_sockaddr_parse(&ss, ip, iplen, port, scope);
}

int uvev_tcp_nodelay(uintptr_t h, int on) { return uv_tcp_nodelay((uv_tcp_t *)h, on); }

int uvev_tcp_keepalive(uintptr_t h, int on, unsigned int delay) {
  return uv_tcp_keepalive((uv_tcp_t *)h, on, delay);
}

int uvev_fileno(uintptr_t h, int *fd) {
  uv_os_fd_t f;
  int err = uv_fileno((uv_handle_t *)h, &f);
  *fd = (int)f;
  return err;
}
