/* probe.h — driving mode (a) of the X1 measurement (see probe.c). */
#ifndef X1_PROBE_H
#define X1_PROBE_H
#include <stdint.h>
#include <uv.h>
int uvev_probe_new(uintptr_t *out);
void uvev_probe_run(uintptr_t p);
int uvev_probe_send(uintptr_t p);
void uvev_probe_stop(uintptr_t p);
#endif
