/* uvev.h — the C shim over libuv that package uvcgo calls.
 *
 * Naming: uvev_* are called from Go; static uvev__* are file-private.
 * The shim never calls back into Go on the loop's hot path: libuv callbacks
 * append a completion record to the loop's queue, and Go reads the queue after
 * each uv_run(UV_RUN_NOWAIT). Handles are malloc'd here and freed only in the
 * uv_close callback (see uvev_close). */
#ifndef UVEV_H
#define UVEV_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#if UV_VERSION_HEX < 0x012c00
#error "uvevent needs libuv >= 1.44: see third_party/libuv/README.md"
#endif

/* What a completion record reports. */
enum {
  UVEV_DONE_CLOSED = 1, /* the handle's close callback ran; its memory is freed */
  UVEV_DONE_ASYNC = 2   /* a uv_async_t was sent (sends coalesce) */
};

/* One completion, written by a libuv callback on the loop thread and read by
 * Go after the turn. Mirrored by uvcgo.Completion: keep the layouts equal. */
typedef struct {
  uint64_t id;    /* the event id Go gave the handle (handle->data) */
  int32_t kind;   /* UVEV_DONE_* */
  int32_t status; /* 0 or a negative libuv error */
} uvev_completion;

/* A loop and its completion queue. Allocated by uvev_loop_new, freed by
 * uvev_loop_free on the goroutine that drives it, after uv_loop_close. */
typedef struct {
  uv_loop_t loop;
  /* keeper is a referenced handle that keeps uv_run polling while Go-side
   * events (timers, futures) are what keeps the reactor running: uv_run does
   * nothing at all on a loop with no referenced handle. Part of this struct;
   * closed by uvev_loop_free. */
  uv_async_t keeper;
  int keeper_closed;
  uvev_completion *done; /* grows by realloc; owned by this struct */
  size_t ndone, capdone;
  int64_t handles; /* handles malloc'd and not yet freed */
} uvev_loop;

/* What one turn of the loop returns to Go, in one crossing. */
typedef struct {
  uvev_completion *done; /* valid until the next turn */
  size_t ndone;
  int timeout; /* uv_backend_timeout after the turn: -1 = none, 0 = now */
} uvev_turn;

uvev_loop *uvev_loop_new(int *err);
void uvev_loop_turn(uvev_loop *l, uvev_turn *out);
int uvev_loop_backend_fd(uvev_loop *l);
int uvev_loop_free(uvev_loop *l);

int uvev_async_new(uvev_loop *l, uint64_t id, uintptr_t *out);
int uvev_async_send(uintptr_t h);
void uvev_close(uvev_loop *l, uintptr_t h);

/* The X1 probe of driving mode (a): a loop blocking in uv_run on its own
 * thread, woken by uv_async_send, answering through a Go callback. */
int uvev_probe_new(uintptr_t *out);
void uvev_probe_run(uintptr_t p);
int uvev_probe_send(uintptr_t p);
void uvev_probe_stop(uintptr_t p);

#endif
