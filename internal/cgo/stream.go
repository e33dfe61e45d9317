package uvcgo

/*
#include "stream.h"
*/
import "C"

import "unsafe"

// The stream calls (stream.c) serve every uv_stream_t kind: TCP, pipe and
// TTY. Reads report CompletionRead records (N bytes in a shim-owned buffer,
// or Status UV_EOF or an error); writes, shutdowns and connects report
// records carrying the stream's id, in the order libuv completes them.

// ReadStart starts reading h: each read is a CompletionRead record.
func (l *Loop) ReadStart(h Handle) error {
	l.mut()
	return errorOf("uv_read_start", int(C.uvev_stream_read_start(C.uintptr_t(h))))
}

// ReadStop stops reading h.
func (l *Loop) ReadStop(h Handle) error {
	l.mut()
	return errorOf("uv_read_stop", int(C.uvev_stream_read_stop(C.uintptr_t(h))))
}

// cbytes is p's address for a call that does not keep it (Go memory may be
// passed to C for the length of a call; C memory in a Go slice too).
func cbytes(p []byte) *C.char { return (*C.char)(unsafe.Pointer(unsafe.SliceData(p))) }

// TryWrite writes what the socket takes at once (uv_try_write) and returns
// how much; 0 and no error when it would block or writes are queued.
func (l *Loop) TryWrite(h Handle, p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	n := int(C.uvev_stream_try_write(C.uintptr_t(h), cbytes(p), C.size_t(len(p))))
	l.crossings.Add(1)
	switch {
	case n >= 0:
		return n, nil
	case n == C.UV_EAGAIN:
		return 0, nil
	}
	return 0, errorOf("uv_try_write", n)
}

// Write queues p (copied into C memory the request owns) behind the
// writes already queued. A CompletionWrite record with the stream's id and
// N = len(p) reports its end. len(p) must fit in 32 bits.
func (l *Loop) Write(h Handle, p []byte) error {
	return errorOf("uv_write", int(C.uvev_stream_write(l.mut(), C.uintptr_t(h), cbytes(p), C.size_t(len(p)))))
}

// ShutdownStream queues a shutdown of h's writing side behind its writes;
// a CompletionShutdown record with the stream's id reports its end.
func (l *Loop) ShutdownStream(h Handle) error {
	return errorOf("uv_shutdown", int(C.uvev_stream_shutdown(l.mut(), C.uintptr_t(h))))
}

// WriteQueueSize returns the bytes queued in libuv, waiting for the socket.
// It reads the handle; it is no call into libuv.
func (l *Loop) WriteQueueSize(h Handle) int {
	l.crossings.Add(1)
	return int(C.uvev_stream_queued(C.uintptr_t(h)))
}

// Adopt gives an accepted handle (the payload of a CompletionConnection
// record, taken with Take) the id its event reports with.
func (l *Loop) Adopt(h Handle, id uint64) {
	l.crossings.Add(1)
	C.uvev_stream_set_id(C.uintptr_t(h), C.uint64_t(id))
}

// ListenerStart listens on h (a handle made for listening) the first time;
// later it takes the connection left pending while stopped. Each connection
// is a CompletionConnection record whose payload is the accepted handle,
// closed after the turn unless taken; errors (EMFILE) are records too.
func (l *Loop) ListenerStart(h Handle, backlog int) error {
	l.mut()
	return errorOf("uv_listen", int(C.uvev_listener_start(C.uintptr_t(h), C.int(backlog))))
}

// ListenerStop makes h leave new connections pending in the kernel's
// backlog until ListenerStart.
func (l *Loop) ListenerStop(h Handle) {
	l.mut()
	C.uvev_listener_stop(C.uintptr_t(h))
}

// Fileno returns h's descriptor (uv_fileno).
func (l *Loop) Fileno(h Handle) (int, error) {
	var fd C.int
	l.crossings.Add(1)
	if rc := C.uvev_fileno(C.uintptr_t(h), &fd); rc != 0 {
		return -1, errorOf("uv_fileno", int(rc))
	}
	return int(fd), nil
}
