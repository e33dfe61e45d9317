/* fs.c — file operations as uv_fs_t requests (open, read, write, close),
 * run on libuv's thread pool, completing through the record queue. */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fs.h"

/* libuv 1.44 makes its pool's threads at the first request submitted to
 * the pool (threadpool.c: uv__work_submit runs init_once, whose
 * init_threads calls pthread_create) and blocks no signal in them; a new
 * thread starts with the signal mask of the thread that made it. A pool
 * thread is no Go thread, so a SIGPIPE raised there (a write to a FIFO
 * whose reader is gone) finds no Go handler to turn it into EPIPE: the
 * default action ends the process. Every submission to the pool
 * (uvev__pool_enter/leave, here and in dns.c) therefore runs with SIGPIPE
 * blocked on the submitting thread until one succeeded: the pool was made
 * then, under that mask, and its threads keep SIGPIPE blocked for good, so
 * such a write fails with EPIPE. The submitting thread's mask is restored
 * at once. */
static int uvev__pool_made;

int uvev__pool_enter(sigset_t *old) {
  if (__atomic_load_n(&uvev__pool_made, __ATOMIC_ACQUIRE)) return 0;
  sigset_t pipe;
  sigemptyset(&pipe);
  sigaddset(&pipe, SIGPIPE);
  return pthread_sigmask(SIG_BLOCK, &pipe, old) == 0;
}

void uvev__pool_leave(int entered, const sigset_t *old, int err) {
  if (!entered) return;
  if (err >= 0) __atomic_store_n(&uvev__pool_made, 1, __ATOMIC_RELEASE);
  pthread_sigmask(SIG_SETMASK, old, NULL);
}

/* A request with the buffer it reads into or writes from. */
typedef struct {
  uv_fs_t req;
  uint64_t id;
  char *buf; /* malloc'd: a read's destination, a write's copy of the bytes */
  int guarded; /* submitted inside uvev__pool_enter: mask is what to restore */
  sigset_t mask;
} uvev__fs;

/* The release of an open's record Go did not take: its descriptor (+1, so
 * that descriptor 0 is no NULL payload) is closed. */
static void uvev__close_opened(void *p) { close((int)((intptr_t)p - 1)); }

/* Runs on the loop thread inside uv_run, once per request, with
 * UV_ECANCELED when uv_cancel got it first. It frees the request here; a
 * read's buffer becomes the record's payload (freed by the turn's release,
 * or by Go when it took it), any other buffer is freed here. */
static void uvev__on_fs(uv_fs_t *req) {
  uvev__fs *f = (uvev__fs *)req;
  uvev_loop *l = (uvev_loop *)((char *)req->loop - offsetof(uvev_loop, loop));
  ssize_t res = req->result;
  uvev_completion *c = uvev__push(l, f->id, UVEV_DONE_FS, res < 0 ? (int32_t)res : 0);
  c->n = res;
  c->aux = req->fs_type;
  if (req->fs_type == UV_FS_READ && res > 0) {
    c->data = f->buf;
    c->release = free;
  } else {
    free(f->buf);
  }
  if (req->fs_type == UV_FS_OPEN && res >= 0) {
    /* The descriptor is the record's payload until Go takes it: a record
     * Go never sees (its reactor closed first) closes it when released. */
    c->data = (char *)(intptr_t)(res + 1);
    c->release = uvev__close_opened;
  }
  if (req->fs_type == UV_FS_CLOSE && res == UV_ECANCELED) {
    close(req->file); /* cancelled before it ran: the descriptor is still open */
  }
  uv_fs_req_cleanup(req);
  l->reqs--;
  free(f);
}

/* The request (and its buffer) is malloc'd here and freed by uvev__on_fs;
 * here when libuv refuses it. */
static uvev__fs *uvev__fs_new(uint64_t id, size_t bufsize) {
  uvev__fs *f = calloc(1, sizeof *f);
  if (f == NULL) return NULL;
  f->id = id;
  if (bufsize > 0 && (f->buf = malloc(bufsize)) == NULL) {
    free(f);
    return NULL;
  }
  f->guarded = uvev__pool_enter(&f->mask);
  return f;
}

static int uvev__fs_submitted(uvev_loop *l, uvev__fs *f, int err, uintptr_t *out) {
  uvev__pool_leave(f->guarded, &f->mask, err);
  if (err < 0) {
    uv_fs_req_cleanup(&f->req);
    free(f->buf);
    free(f);
    return err;
  }
  l->reqs++;
  *out = (uintptr_t)f;
  return 0;
}

int uvev_fs_open(uvev_loop *l, uint64_t id, const char *path, int flags, int mode, uintptr_t *out) {
  uvev__fs *f = uvev__fs_new(id, 0);
  if (f == NULL) return UV_ENOMEM;
  return uvev__fs_submitted(l, f, uv_fs_open(&l->loop, &f->req, path, flags, mode, uvev__on_fs), out);
}

int uvev_fs_read(uvev_loop *l, uint64_t id, int fd, size_t n, int64_t off, uintptr_t *out) {
  uvev__fs *f = uvev__fs_new(id, n);
  if (f == NULL) return UV_ENOMEM;
  uv_buf_t b = uv_buf_init(f->buf, (unsigned int)n);
  return uvev__fs_submitted(l, f, uv_fs_read(&l->loop, &f->req, fd, &b, 1, off, uvev__on_fs), out);
}

int uvev_fs_write(uvev_loop *l, uint64_t id, int fd, const char *p, size_t n, int64_t off, uintptr_t *out) {
  uvev__fs *f = uvev__fs_new(id, n);
  if (f == NULL) return UV_ENOMEM;
  memcpy(f->buf, p, n);
  uv_buf_t b = uv_buf_init(f->buf, (unsigned int)n);
  return uvev__fs_submitted(l, f, uv_fs_write(&l->loop, &f->req, fd, &b, 1, off, uvev__on_fs), out);
}

int uvev_fs_close(uvev_loop *l, uint64_t id, int fd, uintptr_t *out) {
  uvev__fs *f = uvev__fs_new(id, 0);
  if (f == NULL) return UV_ENOMEM;
  return uvev__fs_submitted(l, f, uv_fs_close(&l->loop, &f->req, fd, uvev__on_fs), out);
}

/* Valid only while the request is in flight (Go tracks that). */
int uvev_fs_cancel(uintptr_t req) { return uv_cancel((uv_req_t *)req); }
