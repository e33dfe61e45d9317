/* uvev.h — the C shim over libuv that package uvcgo calls.
 *
 * Naming: uvev_* are called from Go; static uvev__* are file-private;
 * UVEV_* are constants and macros. One C file per kind (async.c, ...), beside
 * the loop core (loop.c).
 *
 * The loop contract the shim keeps (docs/architecture.md §2 says why):
 *  - libuv callbacks never call Go: they append a completion record to the
 *    loop's queue, and Go reads the queue after each turn;
 *  - a record may carry a payload in shim-owned memory (a read buffer, an
 *    directory listing): it is valid until the next turn, which releases it,
 *    unless Go took it (uvev_take) and releases it itself (uvev_release);
 *  - every shim call that reads libuv's clock refreshes it first
 *    (uvev__enter), so a timeout counts from the call, not from the last turn;
 *  - requests in flight (write, connect, fs, work) are counted in
 *    l->reqs until their callback ran;
 *  - handles are malloc'd here and freed only in the uv_close callback
 *    (uvev__on_close), which reports UVEV_DONE_CLOSED for the handle's id. */
#ifndef UVEV_H
#define UVEV_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "faults.h" /* tests only: empty without -DUVEV_FAULTS */

#if UV_VERSION_HEX < 0x012c00
#error "uvevent needs libuv >= 1.44: see third_party/libuv/README.md"
#endif

/* What a completion record reports. */
enum {
  UVEV_DONE_CLOSED = 1, /* the handle's close callback ran; its memory is freed */
  UVEV_DONE_ASYNC = 2,  /* a uv_async_t was sent (sends coalesce) */
  UVEV_DONE_TIMER = 3,  /* a uv_timer_t fired (test kind) */
  UVEV_DONE_WORK = 4,   /* a uv_work_t finished: status 0 or UV_ECANCELED (test kind) */
  /* The kinds' own records, one or more per kind file: */
  UVEV_DONE_POLL = 5,        /* poll.c: n = events (UV_READABLE | ...) */
  UVEV_DONE_READ = 6,        /* stream reads: n = bytes or status, data = buffer */
  UVEV_DONE_WRITE = 7,       /* request: a write finished */
  UVEV_DONE_CONNECT = 8,     /* request: a connect finished */
  UVEV_DONE_CONNECTION = 9,  /* a listener has a connection to accept */
  UVEV_DONE_SHUTDOWN = 10,   /* request: a shutdown finished */
  UVEV_DONE_FSEVENT = 11,    /* fsevent.c: aux = events, data = file name */
  /* 12 and 13 unused: lookups run on Go's resolver (uv/dns_go.go) */
  UVEV_DONE_UDP_RECV = 14,   /* udp: n = bytes, data = buffer and address */
  UVEV_DONE_UDP_SEND = 15,   /* request: a datagram was sent */
  UVEV_DONE_FS = 16,         /* request: a file operation finished */
  UVEV_DONE_PHASE = 17,      /* phase.c: a prepare, check or idle hook ran */
  UVEV_DONE_FSPOLL = 18,     /* fspoll.c: a stat changed or failed, data = both stats */
  UVEV_DONE_HANDLE = 19      /* ipc.c: a handle came in; n = type, aux = tag, data = handle */
};

/* One completion, written by a libuv callback on the loop thread and read by
 * Go after the turn. Mirrored by uvcgo.Completion: keep the layouts equal. */
typedef struct {
  uint64_t id;    /* the event id Go gave the handle or request */
  int32_t kind;   /* UVEV_DONE_* */
  int32_t status; /* 0 or a negative libuv error */
  int64_t n;      /* kind-specific: a byte count, a poll mask, an exit status */
  int64_t aux;    /* kind-specific: a term signal, flags */
  void *data;     /* shim-owned payload or NULL: see uvev_take */
  void (*release)(void *); /* frees data; called after the turn unless taken */
} uvev_completion;

/* What one turn of the loop returns to Go, in one crossing. */
typedef struct {
  uvev_completion *done; /* valid until the next turn */
  size_t ndone;
  int timeout; /* uv_backend_timeout after the turn: -1 = none, 0 = now */
} uvev_turn;

/* A loop and its completion queue. Allocated by uvev_loop_new, freed by
 * uvev_loop_free on the goroutine that drives it, after uv_loop_close. */
typedef struct {
  uv_loop_t loop;
  /* keeper is a referenced handle that keeps uv_run polling while Go-side
   * events (timers, futures) are what keeps the reactor running: uv_run does
   * nothing at all on a loop with no referenced handle. Part of this struct;
   * closed by uvev_loop_shutdown. */
  uv_async_t keeper;
  int keeper_closed;
  /* due is an unreferenced timer that bounds a blocking turn
   * (uvev_loop_wait) by the Go side's next deadline (its timer wheel),
   * which libuv does not know. Part of this struct; closed with the
   * keeper. The keeper doubles as the loop's wake-up: another thread
   * sends it (uvev_loop_wake) to end a blocking turn early. */
  uv_timer_t due;
  uvev_completion *done; /* grows by realloc; owned by this struct */
  size_t ndone, capdone;
  size_t nseen; /* records the last turn gave Go: the next turn releases them */
  /* The array the last turn gave Go, when a push made while Go reads it
   * outgrew it (uvev__push): its first nseen records are the ones Go reads
   * and takes from, until the next turn releases them and frees it. */
  uvev_completion *seen;
  /* Records released since the loop began: a record's place counted from
   * the loop's start (released + its index) names it across releases, so a
   * poll can find the record it pushed and Go has not read yet. */
  uint64_t released;
  int64_t handles; /* handles malloc'd and not yet freed */
  int64_t reqs;    /* requests submitted whose callback has not run */
  /* Read buffers (UVEV_BUF_SIZE) given back and kept for the next reads:
   * a freed 64 KiB block would be trimmed and faulted in again on every
   * read. A singly linked list through the blocks' headers; freed by
   * uvev_loop_free. */
  void *bufs;
  int nbufs;
  /* The block a batched UDP's recvmmsg reads into (udp.c: UVEV_MMSG_CHUNKS
   * chunks of UVEV_BUF_SIZE), the loop's one, shared by its UDPs: a batch
   * is read, copied out and done inside one call of libuv's, so no two are
   * ever in it at once. Malloc'd at the first batch (mmsg_blocks counts
   * them, for the tests), freed by uvev_loop_free. A block malloc'd and
   * freed around each recvmmsg cost a malloc and a free of 1.25 MiB per
   * wake-up. */
  char *mmsg_block;
  int64_t mmsg_blocks;
  /* The calls of uv_run so far (uvev__run): a mark a handle leaves for
   * the rest of one readiness pass (udp.c's drained) names the run it was
   * left in, so that a pass libuv ended by itself does not leave it to
   * the next. */
  uint64_t runs;
  /* Polls started (or given a new mask) since the last turn, whose
   * descriptor libuv hands to epoll only in the next turn: poll.c checks
   * them before it (uvev__poll_check). A list through the polls. */
  void *polls_pending;
  /* Listeners whose socket is still open (stream.c), so that the loop of a
   * reactor dropped without Close can close their sockets and spare
   * handles (uvev_loop_close_all). A doubly linked list through them. */
  void *servers;
  /* last is what the last turn did (uvev_loop_turn, uvev_loop_wait), read
   * by Go in place: Go passes no pointer of its own into a turn, so cgo has
   * no Go memory to check on the loop's hottest call. */
  uvev_turn last;
} uvev_loop;

/* The loop core (loop.c). */
uvev_loop *uvev_loop_new(int *err);
void uvev_loop_turn(uvev_loop *l, int block);
void uvev_loop_wait(uvev_loop *l, int64_t timeout_ms);
void uvev_loop_wake(uvev_loop *l);
int uvev_loop_backend_fd(uvev_loop *l);
void uvev_loop_shutdown(uvev_loop *l);
int uvev_loop_free(uvev_loop *l);
uint64_t uvev_loop_now(uvev_loop *l);
void uvev_take(uvev_completion *c);
void uvev_release(uintptr_t data, uintptr_t release);
void uvev_close(uvev_loop *l, uintptr_t h);

/* For the kind files: the loop a handle belongs to, the record queue, the
 * clock refresh before a call that reads it, and the request count. */
uvev_loop *uvev__loop_of(uv_handle_t *h);
/* uvev__run is uv_run on l's loop, counted in l->runs: every uv_run of the
 * shim goes through it. */
void uvev__run(uvev_loop *l, uv_run_mode mode);
/* uvev__push returns the new record to fill in; the pointer is valid only
 * until the next push (the array may be realloc'd): fill it at once. */
uvev_completion *uvev__push(uvev_loop *l, uint64_t id, int32_t kind, int32_t status);
void uvev__enter(uvev_loop *l);
void uvev__on_close(uv_handle_t *h);
/* Before every uv_run: stops, and reports with UV_EBADF, each poll started
 * since the last turn whose descriptor was closed meanwhile (poll.c). */
void uvev__poll_check(uvev_loop *l);
/* Payload buffers of UVEV_BUF_SIZE bytes, from the loop's pool:
 * uvev__buf_get returns one (NULL when out of memory); a record carrying
 * it sets release = uvev__buf_put, which gives it back to its loop's pool.
 * Loop thread only. */
#define UVEV_BUF_SIZE 65536
char *uvev__buf_get(uvev_loop *l);
void uvev__buf_put(void *p);
int uvev__adopt(uvev_loop *l, uv_handle_t *h, int err, uint64_t id, uintptr_t *out);
/* ipc.c: reports the stand-in of a handle being passed, which only its
 * write's callback closes (uvev_loop_close_all leaves it). */
int uvev__is_pass(uv_handle_t *h);
/* loop.c: releases every record of l not released yet (uvev_loop_close_all). */
void uvev__release_all(uvev_loop *l);
/* stream.c: closes the socket and the spare handle of every listener of l
 * still open (uvev_listener_close), for uvev_loop_close_all. */
void uvev__listeners_close(uvev_loop *l);

/* async.c */
int uvev_async_new(uvev_loop *l, uint64_t id, uintptr_t *out);
int uvev_async_send(uintptr_t h);

/* testkind.c: a libuv timer and a thread-pool request, used by the tests
 * that prove the loop contract through real libuv state. */
int uvev_testtimer_new(uvev_loop *l, uint64_t id, uintptr_t *out);
int uvev_testtimer_start(uvev_loop *l, uintptr_t h, uint64_t timeout_ms, uint64_t repeat_ms);
int uvev_testtimer_stop(uintptr_t h);
int uvev_testwork_submit(uvev_loop *l, uint64_t id, int sleep_us, uintptr_t *out);
int uvev_testwork_cancel(uintptr_t req);

#endif
