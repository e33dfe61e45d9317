/* u1_udp.c: raw libuv comparator for workload U1 (an unpaced burst of
 * datagrams to one UDP socket): a uv_udp_t receiving in batches
 * (UV_UDP_RECVMMSG, 20 datagrams a recvmmsg into one static block), a
 * sender thread writing -n datagrams of -size bytes to it over loopback as
 * fast as sendto(2) goes. Prints
 *
 *   U1 raw-c dgrams_per_s=N share=F
 *
 * the datagrams received per second from the first to the last, and the
 * share of those sent that arrived (the rest the socket's buffer dropped).
 * Receiving ends once the sender is done and a 100 ms check finds nothing
 * new. Usage: u1_udp [n] [size] */
#include <arpa/inet.h>
#include <pthread.h>
#include <stdatomic.h>
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
static uv_timer_t check;
static char block[CHUNK * CHUNKS];
static struct sockaddr_in to;
static long n_send, size;
static atomic_int sent_all;
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
  if (received == 0) first_ns = now_ns();
  received++;
  last_ns = now_ns();
}

static void *sender(void *arg) {
  (void)arg;
  int fd = socket(AF_INET, SOCK_DGRAM, 0);
  char *p = calloc(1, (size_t)size);
  for (long i = 0; i < n_send; i++) {
    if (sendto(fd, p, (size_t)size, 0, (struct sockaddr *)&to, sizeof to) < 0) i--; /* ENOBUFS: again */
  }
  free(p);
  close(fd);
  atomic_store(&sent_all, 1);
  return NULL;
}

static void on_check(uv_timer_t *t) {
  if (atomic_load(&sent_all) && received == seen) {
    uv_close((uv_handle_t *)&udp, NULL);
    uv_close((uv_handle_t *)t, NULL);
  }
  seen = received;
}

int main(int argc, char **argv) {
  n_send = argc > 1 ? atol(argv[1]) : 1000000;
  size = argc > 2 ? atol(argv[2]) : 64;
  if (n_send <= 0 || size <= 0 || size > 1400) {
    fprintf(stderr, "n must be positive, size in 1..1400\n");
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
  pthread_t th;
  if (pthread_create(&th, NULL, sender, NULL) != 0) {
    fprintf(stderr, "pthread_create failed\n");
    return 1;
  }
  uv_run(&loop, UV_RUN_DEFAULT);
  pthread_join(th, NULL);
  uv_loop_close(&loop);
  double secs = (double)(last_ns - first_ns) / 1e9;
  printf("U1 raw-c dgrams_per_s=%.0f share=%.3f\n", secs > 0 ? (double)received / secs : 0, (double)received / (double)n_send);
  return 0;
}
