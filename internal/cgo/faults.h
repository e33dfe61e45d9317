/* faults.h — failures injected into the shim's libuv calls, for tests only.
 * Compiled in only with -DUVEV_FAULTS (make stress sets it, with the Go
 * build tag uvfaults); a release build has none of it. uvev_fault_arm makes
 * the next call of one class fail with a libuv error instead of running. */
#ifndef UVEV_FAULTS_H
#define UVEV_FAULTS_H
#ifdef UVEV_FAULTS

enum { UVEV_FAULT_INIT = 1, UVEV_FAULT_READ_START = 2, UVEV_FAULT_WRITE = 3, UVEV_FAULT_FS_POLL_START = 4 };

void uvev_fault_arm(int op, int err);
int uvev__fault(int op);
/* stream.c: fires a lingering close's timer now. */
void uvev_fault_linger_fire(uintptr_t g);

/* A macro does not expand inside its own expansion: the inner name is the
 * real function. */
#define uv_async_init(...) (uvev__fault(UVEV_FAULT_INIT) ?: uv_async_init(__VA_ARGS__))
#define uv_check_init(...) (uvev__fault(UVEV_FAULT_INIT) ?: uv_check_init(__VA_ARGS__))
#define uv_fs_poll_init(...) (uvev__fault(UVEV_FAULT_INIT) ?: uv_fs_poll_init(__VA_ARGS__))
#define uv_fs_event_init(...) (uvev__fault(UVEV_FAULT_INIT) ?: uv_fs_event_init(__VA_ARGS__))
#define uv_idle_init(...) (uvev__fault(UVEV_FAULT_INIT) ?: uv_idle_init(__VA_ARGS__))
#define uv_pipe_init(...) (uvev__fault(UVEV_FAULT_INIT) ?: uv_pipe_init(__VA_ARGS__))
#define uv_poll_init(...) (uvev__fault(UVEV_FAULT_INIT) ?: uv_poll_init(__VA_ARGS__))
#define uv_prepare_init(...) (uvev__fault(UVEV_FAULT_INIT) ?: uv_prepare_init(__VA_ARGS__))
#define uv_tcp_init(...) (uvev__fault(UVEV_FAULT_INIT) ?: uv_tcp_init(__VA_ARGS__))
#define uv_timer_init(...) (uvev__fault(UVEV_FAULT_INIT) ?: uv_timer_init(__VA_ARGS__))
#define uv_tty_init(...) (uvev__fault(UVEV_FAULT_INIT) ?: uv_tty_init(__VA_ARGS__))
#define uv_read_start(...) (uvev__fault(UVEV_FAULT_READ_START) ?: uv_read_start(__VA_ARGS__))
#define uv_write(...) (uvev__fault(UVEV_FAULT_WRITE) ?: uv_write(__VA_ARGS__))
#define uv_fs_poll_start(...) (uvev__fault(UVEV_FAULT_FS_POLL_START) ?: uv_fs_poll_start(__VA_ARGS__))

#endif
#endif
