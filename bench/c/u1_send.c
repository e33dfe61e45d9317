/* u1_send.c: the sender of workload U1, the one every U1 receiver runs
 * (bench/c/u1_udp.c, bench/cmd/u1, bench/cmd/u1net), so that the receivers
 * are the only difference between their figures. A process of its own,
 * started by the receiver once it receives: it writes n datagrams of size
 * zero bytes to 127.0.0.1:port from one socket as fast as sendto(2) goes,
 * one system call per datagram, unpaced; a sendto refused with ENOBUFS or
 * EINTR is tried again, so exactly n leave. It prints nothing and exits 0
 * when the last has left (what the receiver then waits for).
 * Usage: u1_send port n size */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: u1_send port n size\n");
    return 2;
  }
  long port = atol(argv[1]), n = atol(argv[2]), size = atol(argv[3]);
  if (port <= 0 || port > 65535 || n <= 0 || size <= 0 || size > 1400) {
    fprintf(stderr, "u1_send: port in 1..65535, n positive, size in 1..1400\n");
    return 2;
  }
  struct sockaddr_in to;
  memset(&to, 0, sizeof to);
  to.sin_family = AF_INET;
  to.sin_port = htons((unsigned short)port);
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int fd = socket(AF_INET, SOCK_DGRAM, 0);
  if (fd < 0) {
    perror("u1_send: socket");
    return 1;
  }
  static char payload[1400];
  for (long sent = 0; sent < n;) {
    if (sendto(fd, payload, (size_t)size, 0, (struct sockaddr *)&to, sizeof to) >= 0) {
      sent++;
    } else if (errno != ENOBUFS && errno != EINTR) {
      perror("u1_send: sendto");
      return 1;
    }
  }
  close(fd);
  return 0;
}
