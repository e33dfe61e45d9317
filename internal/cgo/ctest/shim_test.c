/* shim_test.c — the C shim's own tests, without Go: each drives the shim as
 * the Go side does (create, start, turn, close, turn until the close
 * records, free the loop) and checks the records and the counts. Built and
 * run under valgrind's memcheck by `make valgrind`; exits non-zero on the
 * first failed check. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../uvev.h"
#include "../phase.h"
#include "../poll.h"
#include "../stream.h"

#include <sys/socket.h>

void uvev_loop_close_all(uvev_loop *l);

static int checks;

#define CHECK(cond)                                                        \
  do {                                                                     \
    checks++;                                                              \
    if (!(cond)) {                                                         \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      exit(1);                                                             \
    }                                                                      \
  } while (0)

/* turn runs one turn and counts the records of kind k for id. */
static int turn(uvev_loop *l, int block, uint64_t id, int32_t k) {
  uvev_loop_turn(l, block);
  uvev_turn t = l->last;
  int n = 0;
  for (size_t i = 0; i < t.ndone; i++) {
    if (t.done[i].id == id && t.done[i].kind == k) n++;
  }
  return n;
}

/* closed closes h and turns until its close record came. */
static void closed(uvev_loop *l, uintptr_t h, uint64_t id) {
  uvev_close(l, h);
  int got = 0;
  for (int i = 0; i < 100 && !got; i++) got = turn(l, 0, id, UVEV_DONE_CLOSED);
  CHECK(got == 1);
}

static uvev_loop *new_loop(void) {
  int err = 0;
  uvev_loop *l = uvev_loop_new(&err);
  CHECK(l != NULL && err == 0);
  return l;
}

static void free_loop(uvev_loop *l) {
  CHECK(l->handles == 0);
  CHECK(uvev_loop_free(l) == 0);
}

static void test_loop(void) {
  uvev_loop *l = new_loop();
  CHECK(uvev_loop_backend_fd(l) >= 0);
  free_loop(l);
}

static void test_async(void) {
  uvev_loop *l = new_loop();
  uintptr_t h;
  CHECK(uvev_async_new(l, 7, &h) == 0);
  CHECK(l->handles == 1);
  CHECK(uvev_async_send(h) == 0);
  CHECK(uvev_async_send(h) == 0); /* sends coalesce */
  int got = 0;
  for (int i = 0; i < 100 && got == 0; i++) got = turn(l, 0, 7, UVEV_DONE_ASYNC);
  CHECK(got == 1);
  closed(l, h, 7);
  free_loop(l);
}

static void test_timer(void) {
  uvev_loop *l = new_loop();
  uintptr_t h;
  CHECK(uvev_testtimer_new(l, 9, &h) == 0);
  CHECK(uvev_testtimer_start(l, h, 1, 1) == 0);
  int fired = 0;
  while (fired < 3) fired += turn(l, 1, 9, UVEV_DONE_TIMER);
  CHECK(uvev_testtimer_stop(h) == 0);
  closed(l, h, 9);
  free_loop(l);
}

static void test_poll(void) {
  uvev_loop *l = new_loop();
  int p[2];
  CHECK(pipe(p) == 0);
  uintptr_t h;
  CHECK(uvev_poll_new(l, 11, p[0], &h) == 0);
  CHECK(uvev_poll_start(l, h, UV_READABLE) == 0);
  CHECK(write(p[1], "x", 1) == 1);
  int got = 0;
  for (int i = 0; i < 100 && got == 0; i++) got = turn(l, 1, 11, UVEV_DONE_POLL);
  CHECK(got == 1);
  CHECK(uvev_poll_stop(h) == 0);
  closed(l, h, 11);
  close(p[0]);
  close(p[1]);
  free_loop(l);
}

static void test_phase(void) {
  uvev_loop *l = new_loop();
  uintptr_t h;
  CHECK(uvev_phase_new(l, UVEV_PHASE_CHECK, 13, &h) == 0);
  CHECK(uvev_phase_start(h) == 0);
  int got = 0;
  for (int i = 0; i < 10; i++) got += turn(l, 0, 13, UVEV_DONE_PHASE);
  CHECK(got >= 1);
  CHECK(uvev_phase_stop(h) == 0);
  closed(l, h, 13);
  free_loop(l);
}

static void test_work(void) {
  uvev_loop *l = new_loop();
  uintptr_t req;
  CHECK(uvev_testwork_submit(l, 15, 1000, &req) == 0);
  int got = 0;
  while (got == 0) got = turn(l, 1, 15, UVEV_DONE_WORK);
  CHECK(l->reqs == 0);
  free_loop(l);
}

/* A loop abandoned with handles open (a reactor dropped without Close):
 * close_all closes them, the close callbacks free them, the loop frees. */
static void test_close_all(void) {
  uvev_loop *l = new_loop();
  uintptr_t h;
  for (int i = 0; i < 5; i++) CHECK(uvev_async_new(l, 100 + i, &h) == 0);
  CHECK(uvev_testtimer_new(l, 200, &h) == 0);
  CHECK(uvev_testtimer_start(l, h, 1000, 0) == 0);
  CHECK(l->handles == 6);
  uvev_loop_close_all(l);
  uvev_loop_shutdown(l);
  for (int i = 0; i < 100 && (l->handles > 0 || l->reqs > 0); i++) turn(l, 1, 0, 0);
  free_loop(l);
}

/* A descriptor closed after uvev_poll_start, before the turn that hands it
 * to epoll: the turn stops the poll and reports UV_EBADF with
 * UVEV_POLL_FD_CLOSED instead of libuv aborting in epoll_ctl; a closed
 * descriptor is refused by the next start. Also with the number reused for
 * another pipe. A poll started and closed before the turn is skipped. */
static void test_poll_fd_closed(void) {
  for (int reuse = 0; reuse < 2; reuse++) {
    uvev_loop *l = new_loop();
    int p[2], q[2] = {-1, -1};
    CHECK(pipe(p) == 0);
    uintptr_t h;
    CHECK(uvev_poll_new(l, 21, p[0], &h) == 0);
    CHECK(uvev_poll_start(l, h, UV_READABLE) == 0);
    close(p[0]);
    if (reuse) {
      CHECK(pipe(q) == 0);
      CHECK(q[0] == p[0]); /* the lowest free number: the one just closed */
    }
    uvev_loop_turn(l, 0);
    uvev_turn t = l->last;
    int got = 0;
    for (size_t i = 0; i < t.ndone; i++) {
      if (t.done[i].id == 21 && t.done[i].kind == UVEV_DONE_POLL) {
        CHECK(t.done[i].status == UV_EBADF && t.done[i].n == UVEV_POLL_FD_CLOSED);
        got++;
      }
    }
    CHECK(got == 1);
    CHECK(uvev_poll_start(l, h, UV_READABLE) == UV_EBADF);
    closed(l, h, 21);
    close(p[1]);
    if (reuse) {
      close(q[0]);
      close(q[1]);
    }
    free_loop(l);
  }
  uvev_loop *l = new_loop();
  int p[2];
  CHECK(pipe(p) == 0);
  uintptr_t h;
  CHECK(uvev_poll_new(l, 22, p[0], &h) == 0);
  CHECK(uvev_poll_start(l, h, UV_READABLE) == 0);
  closed(l, h, 22); /* its memory is freed inside that turn, after the check */
  close(p[0]);
  close(p[1]);
  free_loop(l);
}

/* A lingering close over a socket pair whose peer never reads: the timer
 * resets (closes: no TCP) the stream and reports the bytes dropped, once;
 * uvev_linger_end then only closes the timer, and tells the same bytes and
 * that the timer reset it. A second one is ended by Go at once (an
 * Abort): it returns the bytes dropped. Nothing leaks. */
static void test_linger(void) {
  for (int abort = 0; abort <= 1; abort++) {
    uvev_loop *l = new_loop();
    int sv[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    uintptr_t h, g;
    CHECK(uvev_pipe_new(l, 21, &h) == 0);
    CHECK(uvev_pipe_open(h, sv[0]) == 0);
    size_t n = 4 << 20;
    char *p = calloc(1, n);
    CHECK(uvev_stream_write(l, h, p, n) == 0);
    free(p);
    CHECK(uvev_stream_queued(h) > 0);
    CHECK(uvev_linger_start(l, h, abort ? 60000 : 5, &g) == 0);
    CHECK(l->handles == 2);
    if (abort) {
      int timed_out = -1;
      CHECK(uvev_linger_end(g, 1, &timed_out) > 0);
      CHECK(timed_out == 0);
    } else {
      int got = 0;
      int64_t dropped = 0;
      for (int i = 0; i < 1000 && !got; i++) {
        uvev_loop_turn(l, 1);
        uvev_turn t = l->last;
        for (size_t j = 0; j < t.ndone; j++) {
          uvev_completion *c = &t.done[j];
          if (c->id == 21 && c->kind == UVEV_DONE_SHUTDOWN && c->aux == UVEV_LINGER_RESET) {
            CHECK(c->status == UV_ETIMEDOUT && c->n > 0);
            dropped = c->n;
            got++;
          }
        }
      }
      CHECK(got == 1);
      int timed_out = 0;
      CHECK(uvev_linger_end(g, 0, &timed_out) == dropped);
      CHECK(timed_out == 1);
    }
    for (int i = 0; i < 100 && (l->handles > 0 || l->reqs > 0); i++) turn(l, 0, 0, 0);
    close(sv[1]);
    free_loop(l);
  }
}

int main(void) {
  test_loop();
  test_async();
  test_timer();
  test_poll();
  test_poll_fd_closed();
  test_phase();
  test_work();
  test_close_all();
  test_linger();
  printf("shim tests: %d checks passed\n", checks);
  return 0;
}
