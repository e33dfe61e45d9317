/* uvev.c — loop, completion queue and handle lifetime for package uvcgo. */
#include <stdlib.h>
#include <string.h>

#include "uvev.h"

/* uvev__push appends a completion. Runs on the loop goroutine's thread, inside
 * uv_run. The array is realloc'd here and freed by uvev_loop_free. On
 * allocation failure the process aborts: a lost close record would leak an id
 * forever. */
static void uvev__push(uvev_loop *l, uint64_t id, int32_t kind, int32_t status) {
  if (l->ndone == l->capdone) {
    size_t cap = l->capdone ? l->capdone * 2 : 64;
    uvev_completion *d = realloc(l->done, cap * sizeof *d);
    if (d == NULL) abort();
    l->done = d;
    l->capdone = cap;
  }
  uvev_completion *c = &l->done[l->ndone++];
  c->id = id;
  c->kind = kind;
  c->status = status;
}

static uvev_loop *uvev__loop_of(uv_handle_t *h) {
  return (uvev_loop *)((char *)h->loop - offsetof(uvev_loop, loop));
}

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
  return l;
}

void uvev_loop_turn(uvev_loop *l, uvev_turn *out) {
  l->ndone = 0;
  uv_run(&l->loop, UV_RUN_NOWAIT);
  out->done = l->done;
  out->ndone = l->ndone;
  out->timeout = uv_backend_timeout(&l->loop);
}

int uvev_loop_backend_fd(uvev_loop *l) { return uv_backend_fd(&l->loop); }

/* Returns UV_EBUSY while handles are open; the caller turns the loop until
 * their close callbacks ran and calls again. */
int uvev_loop_free(uvev_loop *l) {
  if (!l->keeper_closed) {
    uv_close((uv_handle_t *)&l->keeper, NULL);
    l->keeper_closed = 1;
    uv_run(&l->loop, UV_RUN_NOWAIT);
  }
  int err = uv_loop_close(&l->loop);
  if (err != 0) return err;
  free(l->done);
  free(l);
  return 0;
}

static void uvev__on_async(uv_async_t *h) {
  uvev__push(uvev__loop_of((uv_handle_t *)h), (uint64_t)(uintptr_t)h->data, UVEV_DONE_ASYNC, 0);
}

/* The uv_async_t is malloc'd here, on the loop goroutine, and freed in
 * uvev__on_close, on the loop goroutine's thread inside uv_run, after the
 * kind called uvev_close. */
int uvev_async_new(uvev_loop *l, uint64_t id, uintptr_t *out) {
  uv_async_t *h = malloc(sizeof *h);
  if (h == NULL) return UV_ENOMEM;
  int err = uv_async_init(&l->loop, h, uvev__on_async);
  if (err != 0) {
    free(h);
    return err;
  }
  h->data = (void *)(uintptr_t)id;
  l->handles++;
  *out = (uintptr_t)h;
  return 0;
}

/* Safe from any thread while the handle is not closing (Go guarantees it). */
int uvev_async_send(uintptr_t h) { return uv_async_send((uv_async_t *)h); }

/* The close callback frees the handle: the only place handle memory goes. */
static void uvev__on_close(uv_handle_t *h) {
  uvev_loop *l = uvev__loop_of(h);
  uvev__push(l, (uint64_t)(uintptr_t)h->data, UVEV_DONE_CLOSED, 0);
  l->handles--;
  free(h);
}

void uvev_close(uvev_loop *l, uintptr_t h) {
  (void)l;
  uv_close((uv_handle_t *)h, uvev__on_close);
}
