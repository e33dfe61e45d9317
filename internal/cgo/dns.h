/* dns.h — the dns kinds: uv_getaddrinfo and uv_getnameinfo requests
 * (dns.c). */
#ifndef UVEV_DNS_H
#define UVEV_DNS_H

#include "uvev.h"

/* One address of a getaddrinfo answer, as the record's payload carries it:
 * an array of n of these. Mirrored by uvcgo.AddrInfoEntry. */
typedef struct {
  int32_t family; /* AF_INET or AF_INET6 */
  int32_t socktype;
  int32_t protocol;
  uint32_t zone; /* IPv6 scope id */
  uint8_t addr[16]; /* 4 bytes for AF_INET */
  uint16_t port;
  uint16_t pad;
} uvev_addr;

/* Both return the request's address, or a negative libuv error. */
intptr_t uvev_getaddrinfo(uvev_loop *l, uint64_t id, const char *node, size_t nlen, const char *service,
                          size_t slen, int family, int socktype, int flags);
intptr_t uvev_getnameinfo(uvev_loop *l, uint64_t id, int family, uint64_t hi, uint64_t lo, int port,
                          uint32_t zone, int flags);
int uvev_dns_cancel(uintptr_t req);

#endif
