package uvcgo

/*
#include <uv.h>
*/
import "C"

import (
	"syscall"
)

// Error is a libuv error: the operation that failed and libuv's code.
// errors.Is(err, syscall.EINVAL) and friends work through Unwrap.
type Error struct {
	Op   string // e.g. "uv_timer_start"
	Code int    // libuv's negative error code
}

func errorOf(op string, code int) error {
	if code == 0 {
		return nil
	}
	return &Error{Op: op, Code: code}
}

// Name returns libuv's name for the code, e.g. "EINVAL".
func (e *Error) Name() string { return C.GoString(C.uv_err_name(C.int(e.Code))) }

// Error says what failed and how: "uv_async_init: EMFILE (too many open files)".
func (e *Error) Error() string {
	return e.Op + ": " + e.Name() + " (" + C.GoString(C.uv_strerror(C.int(e.Code))) + ")"
}

// Unwrap returns the errno: libuv's codes are negated errno values on Unix.
func (e *Error) Unwrap() error { return syscall.Errno(-e.Code) }

// Version returns the version of the libuv linked in.
func Version() string { return C.GoString(C.uv_version_string()) }

// ErrorOf turns a libuv status into an error (nil for 0) naming op, for the
// kinds that read statuses from completion records.
func ErrorOf(op string, status int) error { return errorOf(op, status) }
