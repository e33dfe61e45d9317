/* fs.h — what fs.c gives package uvcgo: file operations as uv_fs_t
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

int uvev_fs_open(uvev_loop *l, uint64_t id, const char *path, int flags, int mode, uintptr_t *out);
int uvev_fs_read(uvev_loop *l, uint64_t id, int fd, size_t n, int64_t off, uintptr_t *out);
int uvev_fs_write(uvev_loop *l, uint64_t id, int fd, const char *p, size_t n, int64_t off, uintptr_t *out);
int uvev_fs_close(uvev_loop *l, uint64_t id, int fd, uintptr_t *out);
int uvev_fs_cancel(uintptr_t req);

#endif
