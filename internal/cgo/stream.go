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

// DeferTries turns the deferral of tries on or off: while on, DeferTry
// batches them for FlushTries. The reactor turns it on while it
// dispatches a turn's records, so that the writes its callbacks make are
// tried in one crossing at the end of the dispatch.
func (l *Loop) DeferTries(on bool) { l.tb.on = on }

// DeferTry defers a try of p on h (TryWrite's) to the loop's batch: p is
// copied, and to hears the outcome when the batch is flushed. prev is
// what DeferTry returned for the previous try on h still in the batch,
// or -1: a try is made only if that one went out whole. It returns the
// try's index, or -1 when it deferred nothing: deferral is off, the
// batch is being delivered, or p would take it past maxTryBatch bytes.
func (l *Loop) DeferTry(h Handle, p []byte, prev int, to Tried) int {
	b := &l.tb
	if !b.on || b.made || len(p) == 0 || len(b.buf)+len(p) > maxTryBatch {
		return -1
	}
	b.tries = append(b.tries, tryEntry{h: uintptr(h), off: uint64(len(b.buf)), n: uint64(len(p)), prev: int64(prev)})
	b.to = append(b.to, to)
	b.buf = append(b.buf, p...)
	return len(b.tries) - 1
}

// FlushTries makes the tries deferred so far, in order, in one crossing,
// then tells each its outcome (Tried), in the same order. An outcome's
// handler that flushes again delivers the outcomes left; deferring waits
// until every outcome is delivered.
func (l *Loop) FlushTries() {
	b := &l.tb
	if len(b.tries) == 0 {
		return
	}
	b.depth++
	if !b.made {
		b.made = true
		C.uvev_stream_try_batch(cbytes(b.buf), (*C.uvev_try)(unsafe.Pointer(&b.tries[0])), C.size_t(len(b.tries)))
		l.crossings.Add(1)
	}
	for b.made && b.next < len(b.tries) {
		i := b.next
		b.next++
		t := &b.tries[i]
		to := b.to[i]
		b.to[i] = nil
		n, err := int(t.res), error(nil)
		if t.res < 0 {
			n, err = 0, errorOf("uv_try_write", int(t.res))
		}
		to.Tried(b.buf[t.off:t.off+t.n:t.off+t.n], n, err)
	}
	b.depth--
	if b.made {
		b.buf, b.tries, b.to = b.buf[:0], b.tries[:0], b.to[:0]
		if b.depth > 0 {
			// An outer FlushTries is still in a handler that was given
			// bytes of buf: deferrals from now on go to a new buffer.
			b.buf = nil
		}
		b.made, b.next = false, 0
	}
}

// Write queues p (copied into C memory the request owns) behind the
// writes already queued. A CompletionWrite record with the stream's id and
// N = len(p) reports its end; a failed one's Aux is the bytes of p the
// kernel took before the failure. len(p) must fit in 32 bits.
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

// NewListener makes a listener reporting for id over fd, a socket
// listen(2) has run on, which it owns from then on (ListenerClose closes
// it); when it fails, fd is still the caller's. Started, each connection is
// a CompletionConnection record whose payload is its handle (a uv_pipe_t
// with pipe set, else a uv_tcp_t), closed after the turn unless taken; a
// failed accept is a record with the error, after which the listener has
// stopped watching: ListenerStart again retries. At most batch
// connections (1 to 128) are accepted per readiness report.
func (l *Loop) NewListener(id uint64, fd int, pipe bool, batch int) (Handle, error) {
	var h C.uintptr_t
	p := C.int(0)
	if pipe {
		p = 1
	}
	if rc := C.uvev_listener_new(l.mut(), C.uint64_t(id), C.int(fd), p, C.int(min(max(batch, 1), 128)), &h); rc != 0 {
		return 0, errorOf("uv_poll_init", int(rc))
	}
	return Handle(h), nil
}

// ListenerStart watches h's socket: the connections waiting are accepted
// from the next turn on.
func (l *Loop) ListenerStart(h Handle) error {
	l.mut()
	return errorOf("uv_poll_start", int(C.uvev_listener_start(C.uintptr_t(h))))
}

// ListenerStop stops watching h's socket: new connections wait in the
// kernel's backlog until ListenerStart.
func (l *Loop) ListenerStop(h Handle) {
	l.mut()
	C.uvev_listener_stop(C.uintptr_t(h))
}

// ListenerClose stops h and closes its socket, before CloseHandle(h).
func (l *Loop) ListenerClose(h Handle) {
	l.mut()
	C.uvev_listener_close(C.uintptr_t(h))
}

// Fileno returns h's descriptor (uv_fileno).
func (l *Loop) Fileno(h Handle) (int, error) {
	if h == 0 {
		return -1, errorOf("uv_fileno", int(C.UV_EBADF))
	}
	var fd C.int
	l.crossings.Add(1)
	if rc := C.uvev_fileno(C.uintptr_t(h), &fd); rc != 0 {
		return -1, errorOf("uv_fileno", int(rc))
	}
	return int(fd), nil
}

// ResetStream closes h at once, in place of CloseHandle: a TCP stream is
// reset (uv_tcp_close_reset: the peer reads ECONNRESET), any other only
// closed. It returns the bytes h's queue still held, which are dropped.
func (l *Loop) ResetStream(h Handle) int {
	l.mut()
	return int(C.uvev_stream_reset(C.uintptr_t(h)))
}

// LingerStart closes h, in place of CloseHandle, once its queued writes
// are out: the caller ends the linger (LingerEnd) when the last write's
// record came; past timeoutMS milliseconds the stream is reset and a CompletionShutdown
// record with Aux LingerReset, for h's id, tells the bytes dropped (the
// caller still ends the linger). Reading goes on meanwhile, for nobody. On
// failure h is closed as CloseHandle would.
func (l *Loop) LingerStart(h Handle, timeoutMS int64) (Linger, error) {
	var g C.uintptr_t
	ms := max(timeoutMS, 1)
	if rc := C.uvev_linger_start(l.mut(), C.uintptr_t(h), C.uint64_t(ms), &g); rc != 0 {
		return 0, errorOf("uv_timer_init", int(rc))
	}
	return Linger(g), nil
}

// LingerEnd ends the lingering close g, once: the stream closes (with a
// reset, as ResetStream, when reset is set) unless its timer reset it
// already. It returns the bytes of the queue dropped, and timedOut when the
// timer had reset the stream: the bytes are then those its reset dropped,
// which its record tells too (a record still on its way when an Abort in
// the same turn ends the linger first).
func (l *Loop) LingerEnd(g Linger, reset bool) (dropped int, timedOut bool) {
	r := C.int(0)
	if reset {
		r = 1
	}
	var t C.int
	l.mut()
	n := C.uvev_linger_end(C.uintptr_t(g), r, &t)
	return int(n), t != 0
}
