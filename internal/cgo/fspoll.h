/* fspoll.h — the fs poll kind: uv_fs_poll_t watches (fspoll.c). */
#ifndef UVEV_FSPOLL_H
#define UVEV_FSPOLL_H

#include "uvev.h"

int uvev_fspoll_new(uvev_loop *l, uint64_t id, uintptr_t *out);
int uvev_fspoll_start(uvev_loop *l, uintptr_t h, const char *path, unsigned int interval_ms);
int uvev_fspoll_stop(uintptr_t h);

#endif
