/* fs.h — what fs.c gives package uvcgo: file system requests as uv_fs_t
 * requests on libuv's thread pool. */
#ifndef UVEV_FS_H
#define UVEV_FS_H

#include <signal.h>

#include "uvev.h"

/* Around a submission to libuv's thread pool (see fs.c): enter returns
 * whether it blocked SIGPIPE, saving the mask in old; leave restores it and,
 * when the submission succeeded (err >= 0), records the pool as made. */
int uvev__pool_enter(sigset_t *old);
void uvev__pool_leave(int entered, const sigset_t *old, int err);

/* The arguments of one request; op is its uv_fs_type. What a request does
 * not take is ignored. */
typedef struct {
  int op;
  const char *path;  /* copied by libuv */
  const char *path2; /* rename, link, symlink, copyfile: the new path */
  size_t n;          /* read, write */
  int64_t off;       /* read, write: -1 for the position; ftruncate: the size */
  int fd, flags, mode;
  int64_t uid, gid;
  double atime, mtime;
} uvev_fs_args;

/* p: a write's n bytes, copied (apart from a, which is Go memory that
 * may hold no Go pointer). */
int uvev_fs(uvev_loop *l, uint64_t id, const uvev_fs_args *a, const char *p, uintptr_t *out);
int uvev_fs_cancel(uintptr_t req);

#endif
