/* fsevent.h — the fs event kind: uv_fs_event_t watches (fsevent.c). */
#ifndef UVEV_FSEVENT_H
#define UVEV_FSEVENT_H

#include "uvev.h"

/* Marks in a record's aux, beside UV_RENAME and UV_CHANGE: the record is a
 * child watch's (UVEV_FSEVENT_CHILD), and it is about the child's directory
 * itself rather than a file in it (UVEV_FSEVENT_SELF). */
#define UVEV_FSEVENT_CHILD (1 << 16)
#define UVEV_FSEVENT_SELF (1 << 17)

int uvev_fsevent_new(uvev_loop *l, uint64_t id, uintptr_t *out);
int uvev_fsevent_start(uvev_loop *l, uintptr_t h, const char *path);
int uvev_fsevent_stop(uintptr_t h);
int uvev_fsevent_child_new(uvev_loop *l, uint64_t id, const char *path, uintptr_t *out);
void uvev_fsevent_child_close(uintptr_t h);

#endif
