package uvcgo

// This file holds the package's types and constants in pure Go, so that
// they exist in builds without cgo too (see zstub_nocgo.go). Files that
// import "C" hold only functions and methods.

import (
	"errors"
	"syscall"
	"unsafe"
)

// Completion kinds, mirrored from uvev.h (TestConstantsMatchC
// checks the two lists agree).
const (
	CompletionClosed     = 1
	CompletionAsync      = 2
	CompletionTimer      = 3
	CompletionWork       = 4
	CompletionPoll       = 5
	CompletionRead       = 6
	CompletionWrite      = 7
	CompletionConnect    = 8
	CompletionConnection = 9
	CompletionShutdown   = 10
	CompletionFSEvent    = 11
	CompletionUDPRecv    = 14
	CompletionUDPSend    = 15
	CompletionFS         = 16
	CompletionPhase      = 17
	CompletionFSPoll     = 18
	CompletionHandle     = 19
)

// Completion is one record of what libuv did during a turn. Its layout is
// that of uvev_completion. N and Aux are the kind's payload numbers; Data,
// when not zero, is shim-owned memory valid until the next Turn (see Take).
type Completion struct {
	ID      uint64
	Kind    int32
	Status  int32
	N       int64
	Aux     int64
	Data    uintptr
	Release uintptr
}

// Bytes returns the record's payload as a byte slice over C memory. It is
// valid only until the next Turn: copy it, or Take the payload, to keep it.
func (c *Completion) Bytes() []byte {
	if c.Data == 0 || c.N <= 0 {
		return nil
	}
	// Data is C memory, never moved by Go's collector: reading the address
	// through the field's bytes keeps vet's uintptr rule satisfied.
	p := *(*unsafe.Pointer)(unsafe.Pointer(&c.Data))
	return unsafe.Slice((*byte)(p), int(c.N))
}

// Request reports whether the record completes a request (a write, a
// lookup, a thread-pool job) rather than reporting on a handle: a request's
// completion is delivered whatever its event's state, so that no request
// ever ends silently.
func (c *Completion) Request() bool {
	switch c.Kind {
	case CompletionWork, CompletionWrite, CompletionConnect, CompletionShutdown,
		CompletionUDPSend, CompletionFS:
		return true
	}
	return false
}

// Take keeps the payload of a record past the next Turn; the caller must
// Release it.
func Take(c *Completion) (data, release uintptr) {
	data, release = c.Data, c.Release
	c.Data = 0 // the record is C memory: the next turn sees the payload taken
	return data, release
}

// Handle is a libuv handle's address, held as an integer so that the Go
// garbage collector never sees C memory as a Go pointer.
type Handle uintptr

// Request is a libuv request's address, held as an integer (see Handle).
type Request uintptr

// Phase names a loop-phase hook type.
type Phase int

// The loop-phase hooks: prepare runs before libuv polls for I/O, check
// after, idle on every turn (and makes libuv poll without blocking).
// Mirrored from phase.h.
const (
	PhasePrepare Phase = 1
	PhaseCheck   Phase = 2
	PhaseIdle    Phase = 3
)

// ErrNoLibuv: libuv is not there for the caller. Either the program was
// built without cgo (libuv is not linked in; a reactor uses the pure-Go
// driver), or the reactor runs the pure-Go driver: kinds that need libuv
// refuse with it.
var ErrNoLibuv = errors.New("uvcgo: libuv is not available")

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

// ErrorOf turns a libuv status into an error (nil for 0) naming op, for the
// kinds that read statuses from completion records.
func ErrorOf(op string, status int) error { return errorOf(op, status) }

// errName and errText are libuv's uv_err_name and uv_strerror where libuv
// is linked in (errors.go). Elsewhere they are the errno's name ("ENOENT",
// as libuv names it) and its own text, so that an error reads in the same
// shape in a build without cgo: "uv_fs_stat: ENOENT (no such file or
// directory)".
var (
	errName = func(code int) string {
		if name := errnoName(syscall.Errno(-code)); name != "" {
			return name
		}
		return syscall.Errno(-code).Error()
	}
	errText = func(code int) string { return syscall.Errno(-code).Error() }
)

// Name returns libuv's name for the code, e.g. "EINVAL".
func (e *Error) Name() string { return errName(e.Code) }

// Error says what failed and how: "uv_async_init: EMFILE (too many open files)".
func (e *Error) Error() string { return e.Op + ": " + e.Name() + " (" + errText(e.Code) + ")" }

// Unwrap returns the errno: libuv's codes are negated errno values on Unix.
func (e *Error) Unwrap() error { return syscall.Errno(-e.Code) }
