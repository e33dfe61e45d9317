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

_Static_assert(sizeof(uv_stat_t) == 20 * sizeof(uint64_t), "uv_stat_t is 20 64-bit words (Go reads it so)");

/* The release of an open's record Go did not take: its descriptor (+1, so
 * that descriptor 0 is no NULL payload) is closed. */
static void uvev__close_opened(void *p) { close((int)((intptr_t)p - 1)); }

/* payload makes a copy of n bytes at p the record's payload (freed by the
 * turn's release, or by Go when it took it); ENOMEM when there is no
 * memory for it. */
static void uvev__payload(uvev_completion *c, const void *p, size_t n) {
  char *d = malloc(n > 0 ? n : 1);
  if (d == NULL) {
    c->status = UV_ENOMEM;
    return;
  }
  memcpy(d, p, n);
  c->data = d;
  c->n = (int64_t)n;
  c->release = free;
}

/* scandir_payload packs a scandir's entries as Go reads them: for each, its
 * type (uv_dirent_type_t) in one byte, then its name and a NUL. */
static void uvev__scandir_payload(uvev_completion *c, uv_fs_t *req) {
  uv_dirent_t ent;
  size_t n = 0, cap = 256;
  char *d = malloc(cap);
  while (d != NULL && uv_fs_scandir_next(req, &ent) == 0) {
    size_t k = strlen(ent.name);
    if (n + k + 2 > cap) {
      while (n + k + 2 > cap) cap *= 2;
      char *g = realloc(d, cap);
      if (g == NULL) {
        free(d);
        d = NULL;
        break;
      }
      d = g;
    }
    d[n++] = (char)ent.type;
    memcpy(d + n, ent.name, k + 1);
    n += k + 1;
  }
  if (d == NULL) {
    c->status = UV_ENOMEM;
    return;
  }
  c->data = d;
  c->n = (int64_t)n;
  c->release = free;
}

/* Runs on the loop thread inside uv_run, once per request, with
 * UV_ECANCELED when uv_cancel got it first. It frees the request here; a
 * read's buffer becomes the record's payload (freed by the turn's release,
 * or by Go when it took it), any other buffer is freed here. A request
 * whose result is more than a number (a stat, a statfs, a scandir's
 * entries, a path) has it copied into a payload of its own, since libuv's
 * memory goes with uv_fs_req_cleanup. */
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
  if (res >= 0) {
    switch (req->fs_type) {
    case UV_FS_OPEN:
      /* The descriptor is the record's payload until Go takes it: a record
       * Go never sees (its reactor closed first) closes it when released. */
      c->data = (char *)(intptr_t)(res + 1);
      c->release = uvev__close_opened;
      break;
    case UV_FS_STAT:
    case UV_FS_LSTAT:
    case UV_FS_FSTAT:
      uvev__payload(c, &req->statbuf, sizeof req->statbuf);
      break;
    case UV_FS_STATFS: {
      uv_statfs_t *s = req->ptr;
      uint64_t w[7] = {s->f_type, s->f_bsize, s->f_blocks, s->f_bfree, s->f_bavail, s->f_files, s->f_ffree};
      uvev__payload(c, w, sizeof w);
      break;
    }
    case UV_FS_READLINK:
    case UV_FS_REALPATH:
      uvev__payload(c, req->ptr, strlen(req->ptr));
      break;
    case UV_FS_MKDTEMP:
      uvev__payload(c, req->path, strlen(req->path));
      break;
    case UV_FS_SCANDIR:
      uvev__scandir_payload(c, req);
      break;
    default:
      break;
    }
  }
  if (req->fs_type == UV_FS_CLOSE && res == UV_ECANCELED) {
    close(req->file); /* cancelled before it ran: the descriptor is still open */
  }
  uv_fs_req_cleanup(req);
  l->reqs--;
  free(f);
}

/* uvev_fs submits the request a names, libuv's uv_fs_* call of that type
 * with a's arguments: the one way every file system request goes. The
 * request (and a write's copy of its bytes p, or a read's buffer) is
 * malloc'd here and freed by uvev__on_fs, or here when libuv refuses it. */
int uvev_fs(uvev_loop *l, uint64_t id, const uvev_fs_args *a, const char *p, uintptr_t *out) {
  size_t bufsize = (a->op == UV_FS_READ || a->op == UV_FS_WRITE) ? a->n : 0;
  uvev__fs *f = calloc(1, sizeof *f);
  if (f == NULL) return UV_ENOMEM;
  f->id = id;
  if (bufsize > 0 && (f->buf = malloc(bufsize)) == NULL) {
    free(f);
    return UV_ENOMEM;
  }
  f->guarded = uvev__pool_enter(&f->mask);
  uv_loop_t *lp = &l->loop;
  uv_fs_t *r = &f->req;
  uv_buf_t b = uv_buf_init(f->buf, (unsigned int)bufsize);
  int err;
  switch (a->op) {
  case UV_FS_OPEN: err = uv_fs_open(lp, r, a->path, a->flags, a->mode, uvev__on_fs); break;
  case UV_FS_CLOSE: err = uv_fs_close(lp, r, a->fd, uvev__on_fs); break;
  case UV_FS_READ: err = uv_fs_read(lp, r, a->fd, &b, 1, a->off, uvev__on_fs); break;
  case UV_FS_WRITE:
    memcpy(f->buf, p, bufsize);
    err = uv_fs_write(lp, r, a->fd, &b, 1, a->off, uvev__on_fs);
    break;
  case UV_FS_STAT: err = uv_fs_stat(lp, r, a->path, uvev__on_fs); break;
  case UV_FS_LSTAT: err = uv_fs_lstat(lp, r, a->path, uvev__on_fs); break;
  case UV_FS_FSTAT: err = uv_fs_fstat(lp, r, a->fd, uvev__on_fs); break;
  case UV_FS_STATFS: err = uv_fs_statfs(lp, r, a->path, uvev__on_fs); break;
  case UV_FS_FTRUNCATE: err = uv_fs_ftruncate(lp, r, a->fd, a->off, uvev__on_fs); break;
  case UV_FS_UTIME: err = uv_fs_utime(lp, r, a->path, a->atime, a->mtime, uvev__on_fs); break;
  case UV_FS_FUTIME: err = uv_fs_futime(lp, r, a->fd, a->atime, a->mtime, uvev__on_fs); break;
  case UV_FS_ACCESS: err = uv_fs_access(lp, r, a->path, a->mode, uvev__on_fs); break;
  case UV_FS_CHMOD: err = uv_fs_chmod(lp, r, a->path, a->mode, uvev__on_fs); break;
  case UV_FS_FCHMOD: err = uv_fs_fchmod(lp, r, a->fd, a->mode, uvev__on_fs); break;
  case UV_FS_FSYNC: err = uv_fs_fsync(lp, r, a->fd, uvev__on_fs); break;
  case UV_FS_FDATASYNC: err = uv_fs_fdatasync(lp, r, a->fd, uvev__on_fs); break;
  case UV_FS_UNLINK: err = uv_fs_unlink(lp, r, a->path, uvev__on_fs); break;
  case UV_FS_RMDIR: err = uv_fs_rmdir(lp, r, a->path, uvev__on_fs); break;
  case UV_FS_MKDIR: err = uv_fs_mkdir(lp, r, a->path, a->mode, uvev__on_fs); break;
  case UV_FS_MKDTEMP: err = uv_fs_mkdtemp(lp, r, a->path, uvev__on_fs); break;
  case UV_FS_RENAME: err = uv_fs_rename(lp, r, a->path, a->path2, uvev__on_fs); break;
  case UV_FS_SCANDIR: err = uv_fs_scandir(lp, r, a->path, 0, uvev__on_fs); break;
  case UV_FS_LINK: err = uv_fs_link(lp, r, a->path, a->path2, uvev__on_fs); break;
  case UV_FS_SYMLINK: err = uv_fs_symlink(lp, r, a->path, a->path2, 0, uvev__on_fs); break;
  case UV_FS_READLINK: err = uv_fs_readlink(lp, r, a->path, uvev__on_fs); break;
  case UV_FS_REALPATH: err = uv_fs_realpath(lp, r, a->path, uvev__on_fs); break;
  case UV_FS_COPYFILE: err = uv_fs_copyfile(lp, r, a->path, a->path2, a->flags, uvev__on_fs); break;
  case UV_FS_CHOWN: err = uv_fs_chown(lp, r, a->path, (uv_uid_t)a->uid, (uv_gid_t)a->gid, uvev__on_fs); break;
  case UV_FS_FCHOWN: err = uv_fs_fchown(lp, r, a->fd, (uv_uid_t)a->uid, (uv_gid_t)a->gid, uvev__on_fs); break;
  case UV_FS_LCHOWN: err = uv_fs_lchown(lp, r, a->path, (uv_uid_t)a->uid, (uv_gid_t)a->gid, uvev__on_fs); break;
  default: err = UV_EINVAL; break;
  }
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

/* Valid only while the request is in flight (Go tracks that). */
int uvev_fs_cancel(uintptr_t req) { return uv_cancel((uv_req_t *)req); }
