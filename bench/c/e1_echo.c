/* e1_echo.c: raw libuv echo server, the C comparator for workload E1.
 *
 * Usage: e1_echo [port]   (port 0 or none: the kernel picks one)
 *
 * Listens on 127.0.0.1, prints "listening 127.0.0.1:PORT" on stdout once it
 * accepts connections, and echoes every byte back until it is killed (the
 * load generator, bench/cmd/e1load, sends SIGTERM). Each connection owns one
 * read buffer, reused for every read. A read is echoed with uv_try_write;
 * only what the socket does not take at once goes through uv_write, and
 * reading pauses until that write completes, so the buffer is never
 * overwritten while libuv still holds it. TCP_NODELAY is set on accepted
 * connections, as Go's net package does by default. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#define READ_BUF_SIZE 65536

typedef struct {
  uv_tcp_t tcp; /* first member: the handle pointer is the conn pointer */
  uv_write_t write_req;
  char buf[READ_BUF_SIZE];
} conn_t;

static uv_loop_t *loop;

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf);

/* Frees the conn malloc'd in on_connection, on the loop thread, after
 * uv_close has finished with the handle (and cancelled any pending write). */
static void on_close(uv_handle_t *h) { free(h); }

static void close_conn(conn_t *c) {
  if (!uv_is_closing((uv_handle_t *)&c->tcp))
    uv_close((uv_handle_t *)&c->tcp, on_close);
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
  conn_t *c = (conn_t *)h;
  (void)suggested;
  *buf = uv_buf_init(c->buf, sizeof(c->buf));
}

/* The rest of a read that uv_try_write did not take has been written:
 * the buffer is free again, so reading resumes. */
static void on_write(uv_write_t *req, int status) {
  conn_t *c = req->data;
  if (status < 0) {
    close_conn(c);
    return;
  }
  if (uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read) < 0)
    close_conn(c);
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf) {
  conn_t *c = (conn_t *)s;
  if (nread < 0) { /* UV_EOF or an error: the peer is gone */
    close_conn(c);
    return;
  }
  if (nread == 0)
    return;
  uv_buf_t out = uv_buf_init(buf->base, (unsigned int)nread);
  int n = uv_try_write(s, &out, 1);
  if (n == nread)
    return;
  if (n < 0 && n != UV_EAGAIN) {
    close_conn(c);
    return;
  }
  if (n > 0) {
    out.base += n;
    out.len -= (size_t)n;
  }
  /* The buffer stays in use until on_write: stop reading into it. */
  uv_read_stop(s);
  c->write_req.data = c;
  if (uv_write(&c->write_req, s, &out, 1, on_write) < 0)
    close_conn(c);
}

static void on_connection(uv_stream_t *server, int status) {
  if (status < 0) {
    fprintf(stderr, "e1_echo: listen: %s\n", uv_strerror(status));
    return;
  }
  /* Owned by the handle; freed in on_close. */
  conn_t *c = malloc(sizeof(*c));
  if (c == NULL) {
    fprintf(stderr, "e1_echo: out of memory\n");
    exit(1);
  }
  uv_tcp_init(loop, &c->tcp);
  if (uv_accept(server, (uv_stream_t *)&c->tcp) < 0) {
    close_conn(c);
    return;
  }
  uv_tcp_nodelay(&c->tcp, 1);
  if (uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read) < 0)
    close_conn(c);
}

int main(int argc, char **argv) {
  int port = argc > 1 ? atoi(argv[1]) : 0;
  if (port < 0 || port > 65535) {
    fprintf(stderr, "e1_echo: bad port %s\n", argv[1]);
    return 1;
  }
  loop = uv_default_loop();
  uv_tcp_t server;
  struct sockaddr_in addr;
  uv_ip4_addr("127.0.0.1", port, &addr);
  uv_tcp_init(loop, &server);
  int err = uv_tcp_bind(&server, (const struct sockaddr *)&addr, 0);
  if (err == 0)
    err = uv_listen((uv_stream_t *)&server, 1024, on_connection);
  if (err < 0) {
    fprintf(stderr, "e1_echo: listen on port %d: %s\n", port, uv_strerror(err));
    return 1;
  }
  struct sockaddr_in bound;
  int len = sizeof(bound);
  uv_tcp_getsockname(&server, (struct sockaddr *)&bound, &len);
  printf("listening 127.0.0.1:%d\n", ntohs(bound.sin_port));
  fflush(stdout);
  uv_run(loop, UV_RUN_DEFAULT);
  return 0;
}
