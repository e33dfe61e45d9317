// Package uvcgo is the thin layer over libuv: the only package that includes
// uv.h. It exports Go types only (ids, uintptr handles, Go structs), so no
// cgo type crosses into the packages above it. It is uvevent's plumbing, not
// a user-facing API: use packages reactor and uv.
//
// Lifetime rules, stated once here and kept by the C shim (uvev.c):
//   - a Loop's C memory is allocated by NewLoop and freed by Close;
//   - a handle's C memory is allocated by its New call and freed only in its
//     uv_close callback, which reports a CompletionClosed record for its id;
//   - every call on a Loop or its handles is made by one goroutine at a time
//     (the reactor's loop goroutine), except AsyncSend, which is safe from
//     any goroutine while the handle is not closed.
package uvcgo

/*
#cgo pkg-config: libuv-static
#cgo LDFLAGS: -lpthread -ldl -lrt
#include "uvev.h"
*/
import "C"

import (
	"sync/atomic"
	"unsafe"
)

// Completion kinds, mirrored from uvev.h.
const (
	CompletionClosed = C.UVEV_DONE_CLOSED
	CompletionAsync  = C.UVEV_DONE_ASYNC
)

// Completion is one record of what libuv did during a turn. Its layout is
// that of uvev_completion.
type Completion struct {
	ID     uint64
	Kind   int32
	Status int32
}

// The layouts must match: this fails to compile if they drift apart.
var _ [unsafe.Sizeof(Completion{}) - unsafe.Sizeof(C.uvev_completion{})]struct{}
var _ [unsafe.Sizeof(C.uvev_completion{}) - unsafe.Sizeof(Completion{})]struct{}

// Handle is a libuv handle's address, held as an integer so that the Go
// garbage collector never sees C memory as a Go pointer.
type Handle uintptr

// Loop is one uv_loop_t with its completion queue.
type Loop struct {
	p         *C.uvev_loop // C memory: allocated by NewLoop, freed by Close
	crossings atomic.Uint64
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

func (l *Loop) c() *C.uvev_loop {
	l.crossings.Add(1)
	return l.p
}

// Turn runs uv_run(UV_RUN_NOWAIT) once and returns what happened: the
// completions (valid until the next Turn) and libuv's next timeout in
// milliseconds (-1: none, 0: work is pending). The loop always polls: a
// hidden handle keeps it alive until Close.
func (l *Loop) Turn() (done []Completion, timeoutMS int) {
	var t C.uvev_turn
	C.uvev_loop_turn(l.c(), &t)
	if t.ndone > 0 {
		done = unsafe.Slice((*Completion)(unsafe.Pointer(t.done)), int(t.ndone))
	}
	return done, int(t.timeout)
}

// BackendFD returns the descriptor libuv polls (an epoll fd on Linux).
func (l *Loop) BackendFD() int { return int(C.uvev_loop_backend_fd(l.c())) }

// Handles returns the number of handles allocated and not yet freed. It
// reads the C struct; it is no call into the shim.
func (l *Loop) Handles() int { return int(l.p.handles) }

// Crossings returns the number of calls made into the shim for this loop.
func (l *Loop) Crossings() uint64 { return l.crossings.Load() }

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

// NewAsync creates a uv_async_t reporting CompletionAsync records for id.
func (l *Loop) NewAsync(id uint64) (Handle, error) {
	var h C.uintptr_t
	if rc := C.uvev_async_new(l.c(), C.uint64_t(id), &h); rc != 0 {
		return 0, errorOf("uv_async_init", int(rc))
	}
	return Handle(h), nil
}

// AsyncSend wakes the loop and makes the async handle report. Safe from any
// goroutine while the handle is open.
func (l *Loop) AsyncSend(h Handle) error {
	l.crossings.Add(1)
	if rc := C.uvev_async_send(C.uintptr_t(h)); rc != 0 {
		return errorOf("uv_async_send", int(rc))
	}
	return nil
}

// CloseHandle starts closing h. Its memory is freed in the close callback,
// which reports a CompletionClosed record for the handle's id.
func (l *Loop) CloseHandle(h Handle) {
	C.uvev_close(l.c(), C.uintptr_t(h))
}
