/* stream.h — what stream.c (reads, writes, shutdown and listening on any
 * uv_stream_t: TCP, pipe, TTY) and tcp.c give package uvcgo. */
#ifndef UVEV_STREAM_H
#define UVEV_STREAM_H

#include "uvev.h"

/* Reads go into the loop's pooled payload buffers (uvev.h): 64 KiB, as
 * libuv suggests. */
#define UVEV_READ_BUF UVEV_BUF_SIZE

/* stream.c */
int uvev_stream_read_start(uintptr_t h);
int uvev_stream_read_stop(uintptr_t h);
int uvev_stream_try_write(uintptr_t h, const char *p, size_t n);
int uvev_stream_write(uvev_loop *l, uintptr_t h, const char *p, size_t n);
int uvev_stream_shutdown(uvev_loop *l, uintptr_t h);
size_t uvev_stream_queued(uintptr_t h);
void uvev_stream_set_id(uintptr_t h, uint64_t id);
int uvev_listener_start(uintptr_t h, int backlog);
void uvev_listener_stop(uintptr_t h);

/* tcp.c */
int uvev_tcp_new(uvev_loop *l, uint64_t id, int family, int listener, uintptr_t *out);
int uvev_tcp_bind(uintptr_t h, const uint8_t *ip, int iplen, int port, uint32_t scope, int ipv6only);
int uvev_tcp_connect(uvev_loop *l, uintptr_t h, const uint8_t *ip, int iplen, int port, uint32_t scope);
int uvev_tcp_addr(uintptr_t h, int peer, uint8_t *ip, int *iplen, int *port, uint32_t *scope);
int uvev_tcp_nodelay(uintptr_t h, int on);
int uvev_tcp_keepalive(uintptr_t h, int on, unsigned int delay);
int uvev_fileno(uintptr_t h, int *fd);

/* pipe.c */
int uvev_pipe_new(uvev_loop *l, uint64_t id, int listener, uintptr_t *out);
int uvev_pipe_open(uintptr_t h, int fd);
int uvev_pipe_bind(uintptr_t h, const char *name);
int uvev_pipe_connect(uvev_loop *l, uintptr_t h, const char *name);
int uvev_pipe_name(uintptr_t h, int peer, char *buf, size_t *len);

/* tty.c */
int uvev_tty_new(uvev_loop *l, uint64_t id, int fd, uintptr_t *out);
int uvev_tty_set_mode(uintptr_t h, int mode);
int uvev_tty_winsize(uintptr_t h, int *width, int *height);

/* The listening side shared by tcp.c and pipe.c: a server handle is a
 * uvev__server (the libuv handle first), so uvev__on_close frees it whole. */
typedef struct {
  union {
    uv_tcp_t tcp;
    uv_pipe_t pipe;
  } u;
  int paused;    /* stopped: a connection is left pending in libuv */
  int pending;   /* libuv holds an accepted fd the listener has not taken */
  int listening; /* uv_listen has run */
} uvev__server;

#endif
