/* u1_udp.c: raw libuv comparator for workload U1 (an unpaced burst of
 * datagrams to one UDP socket): a uv_udp_t receiving in batches
 * (UV_UDP_RECVMMSG, 20 datagrams a recvmmsg into one static block) on
 * 127.0.0.1, counting each datagram in its callback; once it receives, it
 * starts (uv_spawn) the sender every U1 receiver runs, the process
 * bench/c/u1_send.c, to send n datagrams of size bytes to it over loopback
 * as fast as sendto(2) goes. Prints
 *
 *   U1 raw-c dgrams_per_s=N share=F
 *
 * the datagrams received per second from the first to the last, and the
 * share of those sent that arrived (the rest the socket's buffer dropped).
 * Receiving ends once the sender has exited and a 100 ms check finds
 * nothing new, as bench/internal/udpburst ends it for the Go receivers.
 * delay_ms (0 if absent) is how long to wait, receiving, before starting
 * the sender: time to attach perf stat -p.
 * Usage: u1_udp sender [n] [size] [delay_ms] */
#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

enum { CHUNK = 64 * 1024, CHUNKS = 20 };

static uv_loop_t loop;
static uv_udp_t udp;
static uv_timer_t check, delay;
static uv_process_t proc;
static char *sender_argv[5];
static char arg_port[16], arg_n[32], arg_size[32];
static char block[CHUNK * CHUNKS];
static struct sockaddr_in to;
static long n_send, size;
static int sent_all, sender_failed;
static long received, seen;
static int64_t first_ns, last_ns;

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
  (void)h;
  (void)suggested;
  *buf = uv_buf_init(block, sizeof block);
}

static void on_recv(uv_udp_t *h, ssize_t nread, const uv_buf_t *buf, const struct sockaddr *addr, unsigned flags) {
  (void)h;
  (void)buf;
  (void)flags;
  if (nread < 0 || addr == NULL) return;
  int64_t now = now_ns();
  if (received == 0) first_ns = now;
  received++;
  last_ns = now;
}

static void on_sender_exit(uv_process_t *p, int64_t status, int signal) {
  if (status != 0 || signal != 0) {
    fprintf(stderr, "u1_udp: sender exited with status %lld, signal %d\n", (long long)status, signal);
    sender_failed = 1;
  }
  sent_all = 1;
  uv_close((uv_handle_t *)p, NULL);
}

static void start_sender(uv_timer_t *t) {
  uv_close((uv_handle_t *)t, NULL);
  uv_process_options_t o;
  uv_stdio_container_t stdio[3];
  memset(&o, 0, sizeof o);
  for (int i = 0; i < 3; i++) {
    stdio[i].flags = UV_INHERIT_FD;
    stdio[i].data.fd = i == 1 ? 2 : i; /* its stdout to our stderr: ours holds the result line */
  }
  o.file = sender_argv[0];
  o.args = sender_argv;
  o.exit_cb = on_sender_exit;
  o.stdio = stdio;
  o.stdio_count = 3;
  int err = uv_spawn(&loop, &proc, &o);
  if (err != 0) {
    fprintf(stderr, "u1_udp: spawn %s: %s\n", sender_argv[0], uv_strerror(err));
    sender_failed = 1;
    sent_all = 1;
  }
}

static void on_check(uv_timer_t *t) {
  if (sent_all && received == seen) {
    uv_close((uv_handle_t *)&udp, NULL);
    uv_close((uv_handle_t *)t, NULL);
  }
  seen = received;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: u1_udp sender [n] [size] [delay_ms]\n");
    return 1;
  }
  n_send = argc > 2 ? atol(argv[2]) : 1000000;
  size = argc > 3 ? atol(argv[3]) : 64;
  long delay_ms = argc > 4 ? atol(argv[4]) : 0;
  if (n_send <= 0 || size <= 0 || size > 1400 || delay_ms < 0) {
    fprintf(stderr, "n must be positive, size in 1..1400, delay_ms not negative\n");
    return 1;
  }
  uv_loop_init(&loop);
  uv_udp_init_ex(&loop, &udp, AF_INET | UV_UDP_RECVMMSG);
  uv_ip4_addr("127.0.0.1", 0, &to);
  if (uv_udp_bind(&udp, (struct sockaddr *)&to, 0) != 0) {
    fprintf(stderr, "bind failed\n");
    return 1;
  }
  int len = sizeof to;
  uv_udp_getsockname(&udp, (struct sockaddr *)&to, &len);
  uv_udp_recv_start(&udp, on_alloc, on_recv);
  uv_timer_init(&loop, &check);
  uv_timer_start(&check, on_check, 100, 100);
  snprintf(arg_port, sizeof arg_port, "%d", ntohs(to.sin_port));
  snprintf(arg_n, sizeof arg_n, "%ld", n_send);
  snprintf(arg_size, sizeof arg_size, "%ld", size);
  sender_argv[0] = argv[1];
  sender_argv[1] = arg_port;
  sender_argv[2] = arg_n;
  sender_argv[3] = arg_size;
  uv_timer_init(&loop, &delay);
  uv_timer_start(&delay, start_sender, (uint64_t)delay_ms, 0);
  uv_run(&loop, UV_RUN_DEFAULT);
  uv_loop_close(&loop);
  if (sender_failed) return 1;
  double secs = (double)(last_ns - first_ns) / 1e9;
  printf("U1 raw-c dgrams_per_s=%.0f share=%.3f\n", secs > 0 ? (double)received / secs : 0, (double)received / (double)n_send);
  return 0;
}
