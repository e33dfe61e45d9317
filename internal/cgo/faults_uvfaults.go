//go:build uvfaults && cgo

package uvcgo

/*
#cgo CFLAGS: -DUVEV_FAULTS
#include "uvev.h"
*/
import "C"

// The classes of libuv calls a test can make fail (build tag uvfaults).
const (
	FaultInit        = C.UVEV_FAULT_INIT          // the next uv_*_init
	FaultReadStart   = C.UVEV_FAULT_READ_START    // the next uv_read_start
	FaultWrite       = C.UVEV_FAULT_WRITE         // the next uv_write
	FaultFSPollStart = C.UVEV_FAULT_FS_POLL_START // the next uv_fs_poll_start
)

// InjectFault makes the next libuv call of class op fail with errno (a
// positive syscall.Errno value) instead of running; op 0 disarms. Tests only: it exists in builds with the uvfaults
// tag, whose shim is compiled with -DUVEV_FAULTS.
func InjectFault(op, errno int) { C.uvev_fault_arm(C.int(op), C.int(-errno)) }

// FireLinger fires the lingering close g's timer now, on the loop's
// goroutine, as if its linger time had passed: the stream is reset and its
// record (CompletionShutdown, Aux LingerReset) pushed for the next turn,
// so that a caller can end the linger before Go has seen the record.
// Tests only (build tag uvfaults).
func FireLinger(g Linger) { C.uvev_fault_linger_fire(C.uintptr_t(g)) }
