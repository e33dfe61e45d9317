/* loop.c — the loop core of package uvcgo: the loop, its completion queue,
 * payload release, and handle lifetime. Kinds live in files of their own. */
#include <stdlib.h>
#include <string.h>

#include "uvev.h"

/* uvev__push appends a completion and returns it (payload fields zeroed) for
 * the caller to fill in. Runs on the loop goroutine's thread, inside uv_run,
 * or inside a Go call made while Go dispatches the last turn's records (a
 * listener's Start takes the connection it left pending). The array is
 * realloc'd here and freed by uvev_loop_free; but the array the last turn
 * gave Go is not moved while Go reads it: a push that outgrows it copies it
 * into a new one and keeps it as l->seen, where Go's uvev_take marks what
 * it took, until the next turn releases its records. On allocation failure
 * the process aborts: a lost close record would leak an id forever. */
uvev_completion *uvev__push(uvev_loop *l, uint64_t id, int32_t kind, int32_t status) {
  if (l->ndone == l->capdone) {
    size_t cap = l->capdone ? l->capdone * 2 : 64;
    uvev_completion *d;
    if (l->nseen > 0 && l->seen == NULL) {
      d = malloc(cap * sizeof *d);
      if (d == NULL) abort();
      memcpy(d, l->done, l->ndone * sizeof *d);
      l->seen = l->done;
    } else {
      d = realloc(l->done, cap * sizeof *d);
      if (d == NULL) abort();
    }
    l->done = d;
    l->capdone = cap;
  }
  uvev_completion *c = &l->done[l->ndone++];
  memset(c, 0, sizeof *c);
  c->id = id;
  c->kind = kind;
  c->status = status;
  return c;
}

uvev_loop *uvev__loop_of(uv_handle_t *h) {
  return (uvev_loop *)((char *)h->loop - offsetof(uvev_loop, loop));
}

/* A Go-initiated call that reads libuv's clock (a timer start) must not
 * measure from a clock last read before a long park. */
void uvev__enter(uvev_loop *l) { uv_update_time(&l->loop); }

/* Allocated here, on the goroutine creating the reactor; freed by
 * uvev_loop_free on the goroutine closing it, after uv_loop_close succeeded
 * (every handle's close callback has run). */
uvev_loop *uvev_loop_new(int *err) {
  uvev_loop *l = calloc(1, sizeof *l);
  if (l == NULL) {
    *err = UV_ENOMEM;
    return NULL;
  }
  *err = uv_loop_init(&l->loop);
  if (*err != 0) {
    free(l);
    return NULL;
  }
  *err = uv_async_init(&l->loop, &l->keeper, NULL);
  if (*err != 0) {
    uv_loop_close(&l->loop);
    free(l);
    return NULL;
  }
  uv_timer_init(&l->loop, &l->due); /* cannot fail on Unix */
  uv_unref((uv_handle_t *)&l->due);
  /* One turn now, so that the keeper's descriptor is in libuv's epoll set
   * before anyone waits on the backend descriptor: libuv hands it to epoll
   * only inside uv_run. */
  uvev__run(l, UV_RUN_NOWAIT);
  return l;
}

void uvev__run(uvev_loop *l, uv_run_mode mode) {
  l->runs++;
  uv_run(&l->loop, mode);
}

/* A pooled buffer's header, just before the bytes handed out. */
typedef struct uvev__buf {
  uvev_loop *l;
  struct uvev__buf *next;
  max_align_t align[]; /* the bytes start here, aligned */
} uvev__buf;

/* At most this many buffers wait in a loop's pool (4 MiB); more are freed. */
#define UVEV_BUF_POOL 64

/* Malloc'd here when the pool is empty, on the loop thread; freed by
 * uvev__buf_put when the pool is full, or by uvev_loop_free. */
char *uvev__buf_get(uvev_loop *l) {
  uvev__buf *b = l->bufs;
  if (b != NULL) {
    l->bufs = b->next;
    l->nbufs--;
  } else {
    b = malloc(sizeof *b + UVEV_BUF_SIZE);
    if (b == NULL) return NULL;
    b->l = l;
  }
  return (char *)b->align;
}

void uvev__buf_put(void *p) {
  if (p == NULL) return;
  uvev__buf *b = (uvev__buf *)((char *)p - offsetof(uvev__buf, align));
  uvev_loop *l = b->l;
  if (l->nbufs >= UVEV_BUF_POOL) {
    free(b);
    return;
  }
  b->next = l->bufs;
  l->bufs = b;
  l->nbufs++;
}

/* uvev__release frees the payloads of the first n records that Go did not
 * take and drops those records; n covers at least the records the last
 * turn gave Go (l->nseen), read from l->seen when a push moved the queue
 * meanwhile, which is then freed. */
static void uvev__release(uvev_loop *l, size_t n) {
  for (size_t i = 0; i < n; i++) {
    uvev_completion *c = l->seen != NULL && i < l->nseen ? &l->seen[i] : &l->done[i];
    if (c->data != NULL && c->release != NULL) c->release(c->data);
    c->data = NULL;
  }
  memmove(l->done, l->done + n, (l->ndone - n) * sizeof *l->done);
  l->ndone -= n;
  l->released += n;
  free(l->seen);
  l->seen = NULL;
}

/* uvev__release_turn releases the records the last turn gave Go. Records
 * pushed since, by a Go-initiated call outside uv_run (a listener taking a
 * connection it left pending), stay for this turn to report. */
static void uvev__release_turn(uvev_loop *l) {
  uvev__release(l, l->nseen);
  l->nseen = 0;
}

/* uvev__release_all releases every record not released yet, the last
 * turn's and those pushed since: for the loop of a dropped reactor, whose
 * records nobody reads any more (uvev_loop_close_all). A record's payload
 * may be a handle its release closes, which must happen before the handles
 * left are closed, and once. */
void uvev__release_all(uvev_loop *l) {
  uvev__release(l, l->ndone);
  l->nseen = 0;
}

/* One turn: UV_RUN_NOWAIT, or UV_RUN_ONCE when block is set (Close uses it
 * to wait for close callbacks and requests without spinning). */
void uvev_loop_turn(uvev_loop *l, int block) {
  uvev__release_turn(l);
  uvev__poll_check(l);
  uvev__run(l, block ? UV_RUN_ONCE : UV_RUN_NOWAIT);
  l->last.done = l->done;
  l->last.ndone = l->ndone;
  l->last.timeout = uv_backend_timeout(&l->loop);
  l->nseen = l->ndone;
}

/* The Go side's deadline is due: the turn ends. libuv runs due timers
 * before it computes the poll's timeout, so a deadline due as the run
 * begins (0 ms, or a thread descheduled between uv_timer_start and
 * uv_run) ran here and was gone by then; the poll would have waited with no
 * timeout at all. uv_stop makes that poll look and not wait (what is ready
 * is still run), and is cleared as the run ends. */
static void uvev__on_due(uv_timer_t *t) { uv_stop(t->loop); }

/* uvev_loop_wait is one turn that may block, in one crossing: uv_run(ONCE)
 * waits in epoll_wait until I/O, libuv's own next timer, the Go side's next
 * deadline (timeout_ms, -1: none) or a wake-up (uvev_loop_wake), then runs
 * what is due, as uvev_loop_turn does. Both leave what the turn did in
 * l->last. */
void uvev_loop_wait(uvev_loop *l, int64_t timeout_ms) {
  uvev__release_turn(l);
  uvev__poll_check(l);
  if (timeout_ms >= 0) {
    uv_update_time(&l->loop); /* the timer counts from now, not from the last turn */
    uv_timer_start(&l->due, uvev__on_due, (uint64_t)timeout_ms, 0);
  }
  uvev__run(l, UV_RUN_ONCE);
  uv_timer_stop(&l->due); /* it must not shorten a later turn's timeout */
  l->last.done = l->done;
  l->last.ndone = l->ndone;
  l->last.timeout = uv_backend_timeout(&l->loop);
  l->nseen = l->ndone;
}

/* Safe from any thread until uvev_loop_shutdown: ends a blocking turn. */
void uvev_loop_wake(uvev_loop *l) { uv_async_send(&l->keeper); }

int uvev_loop_backend_fd(uvev_loop *l) { return uv_backend_fd(&l->loop); }

uint64_t uvev_loop_now(uvev_loop *l) {
  uv_update_time(&l->loop);
  return uv_now(&l->loop);
}

/* Go takes a record's payload: the next turn will not release it; Go calls
 * uvev_release when done with it. */
void uvev_take(uvev_completion *c) { c->data = NULL; }

void uvev_release(uintptr_t data, uintptr_t release) {
  void (*fn)(void *) = (void (*)(void *))release;
  if (data != 0 && fn != NULL) fn((void *)data);
}

/* uvev_loop_shutdown closes the keeper: from then on the loop is alive only
 * while handles close or requests run, so a blocking turn returns as soon as
 * there is nothing left. Called by Close once every handle is closing. */
void uvev_loop_shutdown(uvev_loop *l) {
  if (!l->keeper_closed) {
    uv_close((uv_handle_t *)&l->keeper, NULL);
    uv_close((uv_handle_t *)&l->due, NULL);
    l->keeper_closed = 1;
  }
}

/* Returns UV_EBUSY while handles are open; the caller turns the loop until
 * their close callbacks ran and calls again. */
int uvev_loop_free(uvev_loop *l) {
  uvev_loop_shutdown(l);
  uvev__poll_check(l); /* the list must not outlive a uv_run that frees polls */
  uvev__run(l, UV_RUN_NOWAIT); /* the keeper's close, if still pending */
  int err = uv_loop_close(&l->loop);
  if (err != 0) return err;
  uvev__release(l, l->ndone);
  for (uvev__buf *b = l->bufs, *next; b != NULL; b = next) {
    next = b->next;
    free(b);
  }
  free(l->mmsg_block);
  free(l->done);
  free(l);
  return 0;
}

/* uvev__adopt finishes a kind's handle creation: h was malloc'd by the
 * kind's New call and initialised on l; from here on it is counted, and freed
 * only by uvev__on_close. When the init failed (err != 0) it frees h here:
 * the kind must not free it again. */
int uvev__adopt(uvev_loop *l, uv_handle_t *h, int err, uint64_t id, uintptr_t *out) {
  if (err != 0) {
    free(h);
    return err;
  }
  h->data = (void *)(uintptr_t)id;
  l->handles++;
  *out = (uintptr_t)h;
  return 0;
}

/* The close callback frees the handle: the only place handle memory goes. */
void uvev__on_close(uv_handle_t *h) {
  uvev_loop *l = uvev__loop_of(h);
  uvev__push(l, (uint64_t)(uintptr_t)h->data, UVEV_DONE_CLOSED, 0);
  l->handles--;
  free(h);
}

void uvev_close(uvev_loop *l, uintptr_t h) {
  (void)l;
  uv_close((uv_handle_t *)h, uvev__on_close);
}
