package uvcgo

/*
#cgo pkg-config: libuv-static
#cgo LDFLAGS: -lpthread -ldl -lrt
#include "uvev.h"
#include "stream.h"
*/
import "C"

import (
	"sync/atomic"
	"unsafe"
)

// The layouts must match: this fails to compile if they drift apart.
var _ [unsafe.Sizeof(Completion{}) - unsafe.Sizeof(C.uvev_completion{})]struct{}
var _ [unsafe.Sizeof(C.uvev_completion{}) - unsafe.Sizeof(Completion{})]struct{}
var _ [unsafe.Sizeof(tryEntry{}) - unsafe.Sizeof(C.uvev_try{})]struct{}
var _ [unsafe.Sizeof(C.uvev_try{}) - unsafe.Sizeof(tryEntry{})]struct{}

// Loop is one uv_loop_t with its completion queue.
type Loop struct {
	p         *C.uvev_loop // C memory: allocated by NewLoop, freed by Close
	crossings atomic.Uint64
	dirty     bool     // libuv's state changed since the last turn
	tb        tryBatch // writes deferred to one crossing (stream.go)
}

// NewLoop initialises a loop.
func NewLoop() (*Loop, error) {
	var err C.int
	p := C.uvev_loop_new(&err)
	if p == nil {
		return nil, errorOf("uv_loop_init", int(err))
	}
	return &Loop{p: p}, nil
}

// c is the way into the shim for calls that only read.
func (l *Loop) c() *C.uvev_loop {
	l.crossings.Add(1)
	return l.p
}

// mut is the way into the shim for every call that changes libuv's state:
// it marks the loop dirty, so that no kind can change what libuv watches and
// leave the reactor parked on a descriptor that shows nothing yet.
func (l *Loop) mut() *C.uvev_loop {
	l.dirty = true
	return l.c()
}

// Dirty reports whether libuv's state changed since the last turn: the
// reactor must turn libuv before it parks.
func (l *Loop) Dirty() bool { return l.dirty }

// Turn runs uv_run(UV_RUN_NOWAIT) once and returns what happened: the
// completions (valid until the next Turn) and libuv's next timeout in
// milliseconds (-1: none, 0: work is pending), relative to now.
func (l *Loop) Turn() (done []Completion, timeoutMS int) { return l.turn(0) }

// TurnBlocking runs uv_run(UV_RUN_ONCE): it waits in libuv until something
// happens. Close uses it, after Shutdown, to wait for close callbacks and
// requests in flight without spinning.
func (l *Loop) TurnBlocking() (done []Completion, timeoutMS int) { return l.turn(1) }

// Wait runs one turn that may block (uv_run(UV_RUN_ONCE)), in one call:
// it waits in the kernel until I/O is ready, libuv's next timer or
// timeoutMS milliseconds (-1: no limit) have passed, or Wake is called,
// runs what is due, and returns as Turn does. The loop goroutine itself
// blocks in it.
func (l *Loop) Wait(timeoutMS int) (done []Completion, timeout int) {
	l.dirty = false
	C.uvev_loop_wait(l.c(), C.int64_t(timeoutMS))
	return l.completions()
}

// Wake ends a Wait in progress (or makes the next one return at once):
// uv_async_send on the loop's hidden keeper. Safe from any goroutine until
// Shutdown.
func (l *Loop) Wake() {
	l.crossings.Add(1)
	C.uvev_loop_wake(l.p)
}

func (l *Loop) turn(block C.int) ([]Completion, int) {
	l.dirty = false
	C.uvev_loop_turn(l.c(), block)
	return l.completions()
}

// completions reads what the last turn left in the C loop (uvev_loop's
// last: a turn takes no pointer argument but the loop's, which is C memory,
// so cgo's pointer check scans no Go object on every turn).
func (l *Loop) completions() ([]Completion, int) {
	t := &l.p.last
	var done []Completion
	if t.ndone > 0 {
		done = unsafe.Slice((*Completion)(unsafe.Pointer(t.done)), int(t.ndone))
	}
	return done, int(t.timeout)
}

// Release frees a payload taken with Take.
func (l *Loop) Release(data, release uintptr) {
	C.uvev_release(C.uintptr_t(data), C.uintptr_t(release))
	l.crossings.Add(1)
}

// BackendFD returns the descriptor libuv polls (an epoll fd on Linux).
func (l *Loop) BackendFD() int { return int(C.uvev_loop_backend_fd(l.c())) }

// Now refreshes libuv's clock and returns it (uv_now: milliseconds on
// CLOCK_MONOTONIC, or its coarse variant when that is precise to 1 ms).
func (l *Loop) Now() uint64 { return uint64(C.uvev_loop_now(l.c())) }

// Handles returns the number of handles allocated and not yet freed. It
// reads the C struct; it is no call into the shim.
func (l *Loop) Handles() int { return int(l.p.handles) }

// Requests returns the number of requests in flight (submitted, callback
// not yet run). It reads the C struct; it is no call into the shim.
func (l *Loop) Requests() int { return int(l.p.reqs) }

// Crossings returns the number of calls made into the shim for this loop.
func (l *Loop) Crossings() uint64 { return l.crossings.Load() }

// Shutdown closes the loop's hidden keeper handle: from then on a blocking
// turn returns as soon as no handle is closing and no request runs. Call it
// when every handle has been closed.
func (l *Loop) Shutdown() { C.uvev_loop_shutdown(l.mut()) }

// Close frees the loop. It fails with EBUSY while handles remain open; turn
// the loop until their close callbacks ran, then call Close again.
func (l *Loop) Close() error {
	if l.p == nil {
		return nil
	}
	if rc := C.uvev_loop_free(l.c()); rc != 0 {
		return errorOf("uv_loop_close", int(rc))
	}
	l.p = nil
	return nil
}

// CloseHandle starts closing h. Its memory is freed in the close callback,
// which reports a CompletionClosed record for the handle's id.
func (l *Loop) CloseHandle(h Handle) {
	C.uvev_close(l.mut(), C.uintptr_t(h))
}
