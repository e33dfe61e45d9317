/* poll.c — the poll kind: a uv_poll_t watching a descriptor for readiness.
 * The record carries libuv's status (0, or UV_EBADF when epoll reported
 * POLLERR, after which libuv has stopped the handle) and, in n, the events
 * that fired (UV_READABLE | UV_WRITABLE | UV_DISCONNECT | UV_PRIORITIZED).
 * A record with UV_EBADF and n = UVEV_POLL_FD_CLOSED says the descriptor was
 * closed before libuv could hand it to epoll (uvev__poll_check). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "poll.h"

/* A poll's memory: the uv_poll_t first (the handle pointer Go holds and
 * uvev__on_close frees is this struct's), the file its descriptor named at
 * creation, and its place in the loop's list of polls to check before the
 * next turn. */
typedef struct uvev__poll {
  uv_poll_t h;
  dev_t dev; /* the file (fstat) the descriptor named at creation */
  ino_t ino;
  struct uvev__poll *next; /* in l->polls_pending while pending */
  int pending;
  uint64_t rec; /* its last readiness record's place (released + index) */
} uvev__poll;

/* A poll has at most one record Go has not read. A readiness or an error
 * reported again before Go read the first (a run made by uvev_poll_start,
 * then the next turn's; or a Start that restarted the handle libuv had
 * stopped on an error Go had not read yet) goes into that record: its
 * events are added, and an error wins (libuv stopped the handle; Go stops
 * the poll and tells every proxy, whose callbacks start it again). Two
 * records would tell a proxy of one condition twice, the second after its
 * callback had already acted on the first (taken a socket's error, started
 * again) and stopping it. */
static void uvev__on_poll(uv_poll_t *h, int status, int events) {
  uvev_loop *l = uvev__loop_of((uv_handle_t *)h);
  uvev__poll *p = (uvev__poll *)h;
  uint64_t id = (uint64_t)(uintptr_t)h->data;
  if (p->rec >= l->released + l->nseen && p->rec < l->released + l->ndone) {
    uvev_completion *c = &l->done[p->rec - l->released];
    if (c->id == id && c->kind == UVEV_DONE_POLL) {
      if (c->status == 0) {
        c->status = status;
        c->n |= events;
      }
      return;
    }
  }
  uvev_completion *c = uvev__push(l, id, UVEV_DONE_POLL, status);
  c->n = events;
  p->rec = l->released + l->ndone - 1;
}

/* fd_closed reports whether fd is not an open descriptor. */
static int uvev__fd_closed(int fd) { return fd < 0 || (fcntl(fd, F_GETFD) == -1 && errno == EBADF); }

/* fd_gone reports whether p's descriptor was closed behind it: not open, or
 * its number reused for another file (another pipe, socket, file). A number
 * reused for another anonymous-inode descriptor (an eventfd, a timerfd, an
 * epoll or signalfd instance: one inode for them all) cannot be told apart
 * this way. */
static int uvev__fd_gone(uvev__poll *p) {
  uv_os_fd_t fd;
  struct stat st;
  if (uv_fileno((uv_handle_t *)&p->h, &fd) != 0 || uvev__fd_closed(fd)) return 1;
  if (fstat(fd, &st) != 0) return 1;
  return st.st_dev != p->dev || st.st_ino != p->ino;
}

/* A descriptor that is not open is refused before libuv sees it: libuv's
 * own check (epoll_ctl) would say EBADF too, but only after it made the
 * descriptor non-blocking. The poll is malloc'd here and freed in
 * uvev__on_close, on the loop goroutine's thread, after the kind called
 * uvev_close (or by uvev__adopt when the init fails). */
int uvev_poll_new(uvev_loop *l, uint64_t id, int fd, uintptr_t *out) {
  struct stat st;
  if (uvev__fd_closed(fd) || fstat(fd, &st) != 0) return UV_EBADF;
  uvev__poll *p = calloc(1, sizeof *p);
  if (p == NULL) return UV_ENOMEM;
  p->dev = st.st_dev;
  p->ino = st.st_ino;
  p->rec = UINT64_MAX; /* no record yet */
  return uvev__adopt(l, (uv_handle_t *)&p->h, uv_poll_init(&l->loop, &p->h, fd), id, out);
}

/* Starting a started handle changes its mask (libuv's rule). libuv only
 * queues the change: epoll_ctl runs in the next uv_run, and libuv aborts the
 * process when it fails. So a descriptor already closed is refused here,
 * and the change is handed to epoll at once, by a non-blocking uv_run
 * before returning (the poll check first, as before every run): when
 * uvev_poll_start returns, the descriptor is in epoll's set, and a close
 * made after that (the program's own order) only takes it out of the set,
 * which libuv survives. Left to the next turn, a close made right after the
 * start returned raced libuv's epoll_ctl and aborted the process. The poll
 * is listed after the run, so the next turn's check still finds a
 * descriptor closed (or its number reused) since the start and reports it.
 * What the run pushes stays for the next turn to report, as any push made
 * outside a turn. */
int uvev_poll_start(uvev_loop *l, uintptr_t h, int events) {
  uvev__poll *p = (uvev__poll *)h;
  if (uvev__fd_gone(p)) return UV_EBADF;
  int err = uv_poll_start(&p->h, events, uvev__on_poll);
  if (err != 0) return err;
  uvev__poll_check(l);
  uvev__run(l, UV_RUN_NOWAIT);
  if (!p->pending) {
    p->pending = 1;
    p->next = l->polls_pending;
    l->polls_pending = p;
  }
  return 0;
}

int uvev_poll_stop(uintptr_t h) { return uv_poll_stop((uv_poll_t *)h); }

/* Every listed poll is still allocated here: a poll's memory is freed only
 * by a uv_run, and the list is emptied before each. A poll stopped or
 * closing since it was listed has nothing for epoll; one still active whose
 * descriptor is gone (uvev__fd_gone) is stopped (uv_poll_stop takes its
 * watcher out of the queue, so the turn does not touch epoll for it) and
 * reported. What the shim cannot see, libuv may still abort on: a
 * descriptor closed after this check and before the turn's epoll_ctl (a
 * few instructions), and a number reused for a file fd_gone cannot tell
 * apart whose epoll_ctl fails (an epoll instance: ELOOP). */
void uvev__poll_check(uvev_loop *l) {
  uvev__poll *p = l->polls_pending;
  l->polls_pending = NULL;
  while (p != NULL) {
    uvev__poll *next = p->next;
    p->next = NULL;
    p->pending = 0;
    uv_handle_t *h = (uv_handle_t *)&p->h;
    if (!uv_is_closing(h) && uv_is_active(h) && uvev__fd_gone(p)) {
      uv_poll_stop(&p->h);
      uvev_completion *c = uvev__push(l, (uint64_t)(uintptr_t)h->data, UVEV_DONE_POLL, UV_EBADF);
      c->n = UVEV_POLL_FD_CLOSED;
    }
    p = next;
  }
}
