/* phase.h — the loop-phase hook kinds (phase.c). */
#ifndef UVEV_PHASE_H
#define UVEV_PHASE_H
#include "uvev.h"

enum { UVEV_PHASE_PREPARE = 1, UVEV_PHASE_CHECK = 2, UVEV_PHASE_IDLE = 3 };

int uvev_phase_new(uvev_loop *l, int which, uint64_t id, uintptr_t *out);
int uvev_phase_start(uintptr_t h);
int uvev_phase_stop(uintptr_t h);
#endif
