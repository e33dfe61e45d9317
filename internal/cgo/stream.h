/* stream.h — what stream.c (reads, writes, shutdown and listening on any
 * uv_stream_t: TCP, pipe, TTY) and tcp.c give package uvcgo. */
#ifndef UVEV_STREAM_H
#define UVEV_STREAM_H

#include "uvev.h"

/* Reads go into the loop's pooled payload buffers (uvev.h): 64 KiB, as
 * libuv suggests. */
#define UVEV_READ_BUF UVEV_BUF_SIZE

/* One write of a batch tried in one crossing (uvev_stream_try_batch): n
 * bytes at off in the batch's buffer, for stream h; prev is the index of
 * the batch's previous try on the same stream, or -1. res is written back:
 * the bytes the socket took, or a negative libuv error. Mirrored by
 * uvcgo.tryEntry: keep the layouts equal. */
typedef struct {
  uintptr_t h;
  uint64_t off;
  uint64_t n;
  int64_t prev;
  int64_t res;
} uvev_try;

/* stream.c */
void uvev_stream_try_batch(const char *buf, uvev_try *t, size_t n);
int uvev_stream_read_start(uintptr_t h);
int uvev_stream_read_stop(uintptr_t h);
int uvev_stream_try_write(uintptr_t h, const char *p, size_t n);
int uvev_stream_write(uvev_loop *l, uintptr_t h, const char *p, size_t n);
int uvev_stream_shutdown(uvev_loop *l, uintptr_t h);
size_t uvev_stream_queued(uintptr_t h);
void uvev_stream_set_id(uintptr_t h, uint64_t id);
int64_t uvev_stream_reset(uintptr_t h);
int uvev_linger_start(uvev_loop *l, uintptr_t h, uint64_t timeout_ms, uintptr_t *out);
int64_t uvev_linger_end(uintptr_t g, int reset, int *timed_out);
int uvev_listener_new(uvev_loop *l, uint64_t id, int fd, int pipe, int batch, uintptr_t *out);
int uvev_listener_start(uintptr_t h);
void uvev_listener_stop(uintptr_t h);
void uvev_listener_close(uintptr_t h);

/* The record a lingering close's timer pushes for its stream when it
 * resets it (UVEV_DONE_SHUTDOWN with status UV_ETIMEDOUT, n = the bytes
 * dropped): aux tells it from a shutdown's. */
#define UVEV_LINGER_RESET 1

/* tcp.c */
int uvev_tcp_new(uvev_loop *l, uint64_t id, uintptr_t *out);
int uvev_tcp_connect(uvev_loop *l, uintptr_t h, const uint8_t *ip, int iplen, int port, uint32_t scope);
int uvev_tcp_addr(uintptr_t h, int peer, uint8_t *ip, int *iplen, int *port, uint32_t *scope);
int uvev_accepted_take(uintptr_t p, int *fd, uint8_t *ip, int *iplen, int *port, uint32_t *scope);
int uvev_tcp_open_fd(uvev_loop *l, uint64_t id, int fd, uintptr_t *out);
int uvev_tcp_nodelay(uintptr_t h, int on);
int uvev_tcp_keepalive(uintptr_t h, int on, unsigned int delay);
int uvev_fileno(uintptr_t h, int *fd);

/* pipe.c */
int uvev_pipe_new(uvev_loop *l, uint64_t id, uintptr_t *out);
int uvev_pipe_open(uintptr_t h, int fd);
int uvev_pipe_connect(uvev_loop *l, uintptr_t h, const char *name);
int uvev_pipe_name(uintptr_t h, int peer, char *buf, size_t *len);

/* ipc.c */
int uvev_ipc_new(uvev_loop *l, uint64_t id, uintptr_t *out);
int uvev_ipc_send(uvev_loop *l, uintptr_t h, int fd, int tag);
int uvev_ipc_read_start(uintptr_t h);

/* tty.c */
int uvev_tty_new(uvev_loop *l, uint64_t id, int fd, uintptr_t *out);
int uvev_tty_set_mode(uintptr_t h, int mode);
int uvev_tty_winsize(uintptr_t h, int *width, int *height);

/* A listener (stream.c): its listening socket, made and bound by Go, watched
 * by a uv_poll_t (first: the handle Go holds, which uvev__on_close frees
 * whole); connections are accepted by the shim, not by uv_listen. */
typedef struct uvev__server {
  uv_poll_t poll;
  int fd;             /* the listening socket, the server's: closed by uvev_listener_close */
  int pipe;           /* connections are uv_pipe_t (Unix sockets), else uv_tcp_t */
  int batch;          /* at most this many accepted per readiness report */
  void *spare; /* what the next connection goes into (a uv_pipe_t initialised, a TCP connection's uvev__accepted), or NULL */
  /* In the loop's servers list while fd is open. */
  struct uvev__server *prev, *next;
} uvev__server;

#endif
