/* fsevent.c — the fs event kind: uv_fs_event_t (inotify on Linux). A
 * record carries the events in aux (UV_RENAME | UV_CHANGE) and the file
 * name as its payload (n bytes, NUL-terminated, freed by the turn after the
 * record's).
 *
 * Linux has no recursive watch, so a recursive event is emulated with one
 * child watch per directory below the root: children report with the
 * root's id, their payload is the directory's path joined with the name,
 * and aux has UVEV_FSEVENT_CHILD set (and UVEV_FSEVENT_SELF for the
 * directory's own events). Children are closed by the kind
 * (uvev_fsevent_child_close), report no close record, and are counted in
 * l->handles like any handle. */
#include <stdlib.h>
#include <string.h>

#include "fsevent.h"

static void uvev__fsevent_push(uv_fs_event_t *h, char *name, int events, int status) {
  uvev_completion *c = uvev__push(uvev__loop_of((uv_handle_t *)h), (uint64_t)(uintptr_t)h->data, UVEV_DONE_FSEVENT, status);
  c->aux = events;
  if (name != NULL) {
    c->data = name;
    c->release = free;
    c->n = (int64_t)strlen(name);
  }
}

/* The name is strdup'd here, on the loop thread, and freed by the turn
 * after the record's. */
static void uvev__on_fsevent(uv_fs_event_t *h, const char *filename, int events, int status) {
  uvev__fsevent_push(h, strdup(filename != NULL ? filename : ""), events, status);
}

/* Whether libuv named a record by the watched path's base name: inotify gave
 * no name, so the record is about the watched directory itself. libuv then
 * passes a pointer into h->path (uv__basename_r), which tells it apart from
 * a file of the same name inside the directory. */
static int uvev__fsevent_self(uv_fs_event_t *h, const char *filename) {
  if (filename == NULL || h->path == NULL) return 0;
  uintptr_t f = (uintptr_t)filename, p = (uintptr_t)h->path;
  return f >= p && f <= p + strlen(h->path);
}

/* A child's record names the file by its directory's path and its name:
 * malloc'd here, freed by the turn after the record's. */
static void uvev__on_fsevent_child(uv_fs_event_t *h, const char *filename, int events, int status) {
  if (uvev__fsevent_self(h, filename)) events |= UVEV_FSEVENT_SELF;
  const char *f = filename != NULL ? filename : "";
  size_t fn = strlen(f);
  size_t dn = 0;
  char probe[1];
  uv_fs_event_getpath(h, probe, &dn); /* UV_ENOBUFS: dn is the path's length */
  char *name = malloc(dn + 1 + fn + 1);
  if (name != NULL) {
    size_t got = dn + 1;
    if (uv_fs_event_getpath(h, name, &got) != 0) got = 0;
    name[got] = '/';
    memcpy(name + got + 1, f, fn + 1);
  }
  uvev__fsevent_push(h, name, events | UVEV_FSEVENT_CHILD, status);
}

/* The root uv_fs_event_t is malloc'd here and freed in uvev__on_close, on
 * the loop goroutine's thread, after the kind called uvev_close. */
int uvev_fsevent_new(uvev_loop *l, uint64_t id, uintptr_t *out) {
  uv_fs_event_t *h = malloc(sizeof *h);
  if (h == NULL) return UV_ENOMEM;
  return uvev__adopt(l, (uv_handle_t *)h, uv_fs_event_init(&l->loop, h), id, out);
}

/* libuv copies the path. */
int uvev_fsevent_start(uvev_loop *l, uintptr_t h, const char *path) {
  (void)l;
  return uv_fs_event_start((uv_fs_event_t *)h, uvev__on_fsevent, path, 0);
}

int uvev_fsevent_stop(uintptr_t h) { return uv_fs_event_stop((uv_fs_event_t *)h); }

/* A child's close callback frees it, reporting nothing: its root's id
 * lives on. */
static void uvev__fsevent_child_closed(uv_handle_t *h) {
  uvev__loop_of(h)->handles--;
  free(h);
}

/* A child watch is malloc'd here and freed by uvev__fsevent_child_closed,
 * on the loop thread, after the kind called uvev_fsevent_child_close; one
 * whose start failed is closed here the same way (an initialised handle is
 * in the loop's queue until its close callback ran). */
int uvev_fsevent_child_new(uvev_loop *l, uint64_t id, const char *path, uintptr_t *out) {
  uv_fs_event_t *h = malloc(sizeof *h);
  if (h == NULL) return UV_ENOMEM;
  int err = uv_fs_event_init(&l->loop, h);
  if (err != 0) {
    free(h);
    return err;
  }
  h->data = (void *)(uintptr_t)id;
  l->handles++;
  err = uv_fs_event_start(h, uvev__on_fsevent_child, path, 0);
  if (err != 0) {
    uv_close((uv_handle_t *)h, uvev__fsevent_child_closed);
    return err;
  }
  *out = (uintptr_t)h;
  return 0;
}

void uvev_fsevent_child_close(uintptr_t h) { uv_close((uv_handle_t *)h, uvev__fsevent_child_closed); }
