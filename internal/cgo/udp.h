/* udp.h — what udp.c gives package uvcgo: uv_udp_t, datagrams with their
 * addresses. */
#ifndef UVEV_UDP_H
#define UVEV_UDP_H

#include "uvev.h"

/* A received datagram's payload buffer: the sender's address first, then
 * the bytes (the record's n of them). */
typedef struct {
  struct sockaddr_storage from;
  char bytes[];
} uvev_dgram;

/* For Go: where a datagram's bytes start in its buffer. */
enum { UVEV_DGRAM_BYTES = offsetof(uvev_dgram, bytes) };

/* Datagrams one batched receive (recvmmsg) reads at most: libuv reads as
 * many as its buffer has chunks of UVEV_BUF_SIZE, up to 20. */
enum { UVEV_MMSG_CHUNKS = 20 };

/* The options uvev_udp_option sets. */
enum { UVEV_UDP_BROADCAST = 1, UVEV_UDP_TTL, UVEV_UDP_MULTICAST_TTL, UVEV_UDP_MULTICAST_LOOP };

int uvev_udp_new(uvev_loop *l, uint64_t id, int family, uintptr_t *out);
int uvev_udp_bind(uintptr_t h, const uint8_t *ip, int iplen, int port, uint32_t scope, unsigned int flags);
int uvev_udp_batched(uintptr_t h);
int uvev_udp_recv_start(uintptr_t h);
int uvev_udp_recv_stop(uintptr_t h);
int uvev_udp_try_send(uintptr_t h, const char *p, size_t n, const uint8_t *ip, int iplen, int port, uint32_t scope);
int uvev_udp_send(uvev_loop *l, uintptr_t h, const char *p, size_t n, const uint8_t *ip, int iplen, int port, uint32_t scope);
int uvev_udp_option(uintptr_t h, int opt, int v);
int uvev_udp_multicast_interface(uintptr_t h, const char *ifaddr);
int uvev_udp_membership(uintptr_t h, const char *group, const char *ifaddr, const char *source, int join);
int uvev_udp_addr(uintptr_t h, uint8_t *ip, int *iplen, int *port, uint32_t *scope);
int uvev_sockaddr_parse(const struct sockaddr_storage *ss, uint8_t *ip, int *iplen, int *port, uint32_t *scope);
int uvev_sockaddr_make(struct sockaddr_storage *ss, const uint8_t *ip, int iplen, int port, uint32_t scope);

#endif
