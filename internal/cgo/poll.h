/* poll.h — the poll kind: a uv_poll_t over any descriptor (poll.c). */
#ifndef UVEV_POLL_H
#define UVEV_POLL_H

#include "uvev.h"

/* The n of a UV_EBADF record for a descriptor closed before the turn that
 * would have handed it to epoll (no events are negative). */
#define UVEV_POLL_FD_CLOSED (-1)

int uvev_poll_new(uvev_loop *l, uint64_t id, int fd, uintptr_t *out);
int uvev_poll_start(uvev_loop *l, uintptr_t h, int events);
int uvev_poll_stop(uintptr_t h);

#endif
