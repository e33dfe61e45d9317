// Package uvcgo is the thin layer over libuv: the only package that includes
// uv.h. It exports Go types only (ids, uintptr handles, Go structs), so no
// cgo type crosses into the packages above it. It is uvevent's plumbing, not
// a user-facing API: use packages reactor and uv.
//
// Lifetime rules, stated once here and kept by the C shim (loop.c):
//   - a Loop's C memory is allocated by NewLoop and freed by Close;
//   - a handle's C memory is allocated by its New call and freed only in its
//     uv_close callback, which reports a CompletionClosed record for its id;
//   - a record's payload (Completion.Data) is shim-owned and valid until the
//     next Turn, which releases it, unless the caller took it (Take) and
//     releases it itself (Release);
//   - every call on a Loop or its handles is made by one goroutine at a time
//     (the reactor's loop goroutine), except AsyncSend, which is safe from
//     any goroutine while the handle is not closed.
//
// The loop contract every kind relies on is kept here, not by the kinds:
// every call that changes libuv's state marks the loop dirty (Dirty), so the
// reactor turns libuv before it parks again; every call that reads libuv's
// clock refreshes it first; requests in flight are counted (Requests).
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
	CompletionTimer  = C.UVEV_DONE_TIMER
	CompletionWork   = C.UVEV_DONE_WORK

	CompletionPoll       = C.UVEV_DONE_POLL
	CompletionRead       = C.UVEV_DONE_READ
	CompletionWrite      = C.UVEV_DONE_WRITE
	CompletionConnect    = C.UVEV_DONE_CONNECT
	CompletionConnection = C.UVEV_DONE_CONNECTION
	CompletionShutdown   = C.UVEV_DONE_SHUTDOWN
	CompletionFSEvent    = C.UVEV_DONE_FSEVENT
	CompletionAddrInfo   = C.UVEV_DONE_ADDRINFO
	CompletionNameInfo   = C.UVEV_DONE_NAMEINFO
	CompletionUDPRecv    = C.UVEV_DONE_UDP_RECV
	CompletionUDPSend    = C.UVEV_DONE_UDP_SEND
	CompletionFS         = C.UVEV_DONE_FS
	CompletionPhase      = C.UVEV_DONE_PHASE
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

// The layouts must match: this fails to compile if they drift apart.
var _ [unsafe.Sizeof(Completion{}) - unsafe.Sizeof(C.uvev_completion{})]struct{}
var _ [unsafe.Sizeof(C.uvev_completion{}) - unsafe.Sizeof(Completion{})]struct{}

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

// Handle is a libuv handle's address, held as an integer so that the Go
// garbage collector never sees C memory as a Go pointer.
type Handle uintptr

// Loop is one uv_loop_t with its completion queue.
type Loop struct {
	p         *C.uvev_loop // C memory: allocated by NewLoop, freed by Close
	crossings atomic.Uint64
	dirty     bool // libuv's state changed since the last turn
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

func (l *Loop) turn(block C.int) ([]Completion, int) {
	var t C.uvev_turn
	l.dirty = false
	C.uvev_loop_turn(l.c(), block, &t)
	var done []Completion
	if t.ndone > 0 {
		done = unsafe.Slice((*Completion)(unsafe.Pointer(t.done)), int(t.ndone))
	}
	return done, int(t.timeout)
}

// Take keeps the payload of done[i] past the next Turn; the caller must
// Release it.
func Take(c *Completion) (data, release uintptr) {
	data, release = c.Data, c.Release
	c.Data = 0 // the record is C memory: the next turn sees the payload taken
	return data, release
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

// Request reports whether the record completes a request (a write, a
// lookup, a thread-pool job) rather than reporting on a handle: a request's
// completion is delivered whatever its event's state, so that no request
// ever ends silently.
func (c *Completion) Request() bool {
	switch c.Kind {
	case CompletionWork, CompletionWrite, CompletionConnect, CompletionShutdown,
		CompletionAddrInfo, CompletionNameInfo, CompletionUDPSend, CompletionFS:
		return true
	}
	return false
}
