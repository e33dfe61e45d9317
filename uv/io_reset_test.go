package uv_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/uv"
)

// resetPeer accepts a connection from a plain net.Conn client that will
// reset it (SO_LINGER 0) when closed: the server's IO and the client.
func resetPeer(t *testing.T, v *ioEnv) (*uv.IO, *net.TCPConn) {
	t.Helper()
	acc := make(chan *uv.IO, 1)
	go func() {
		s, err := v.ln.AcceptIO(context.Background())
		if err != nil {
			t.Errorf("AcceptIO: %v", err)
		}
		acc <- s
	}()
	nc, err := net.Dial("tcp4", v.ln.Addr().String())
	uv.UvtMust(t, err)
	s := uv.UvtRecv(t, acc, "accepted connection")
	if s == nil {
		t.FailNow()
	}
	tc := nc.(*net.TCPConn)
	uv.UvtMust(t, tc.SetLinger(0))
	return s, tc
}

// isResetOrPipe reports whether err is what writing to a reset
// connection gives.
func isResetOrPipe(err error) bool {
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// TestIOResetWithWritesQueued: a peer that resets while a Send, a
// WriteAsync and a blocking Write wait in the queue: each fails with the
// reset (ECONNRESET or EPIPE), later writes fail too, the Send's failure
// reaches the callbacks, and closing then is clean.
func TestIOResetWithWritesQueued(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		s, nc := resetPeer(t, v)
		cs := uv.UvtSubscribe(t, s, v.u.Owner().Owned)
		uv.UvtMust(t, s.Start())
		uv.UvtMust(t, s.Send(make([]byte, 16<<20))) // the peer never reads
		wf, err := s.WriteAsync(make([]byte, 1<<20))
		uv.UvtMust(t, err)
		q0 := s.Queued()
		werr := make(chan error, 1)
		go func() {
			_, err := s.Write(make([]byte, 1<<20))
			werr <- err
		}()
		uv.UvtWaitFor(t, "the Write to queue", func() bool { return s.Queued() > q0 })
		uv.UvtMust(t, nc.Close()) // RST
		ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
		defer cancel()
		if _, err := wf.Await(ctx); !isResetOrPipe(err) {
			t.Errorf("WriteAsync queued at the reset = %v, want ECONNRESET or EPIPE", err)
		}
		if err := uv.UvtRecv(t, werr, "the Write's end"); !isResetOrPipe(err) {
			t.Errorf("Write queued at the reset = %v, want ECONNRESET or EPIPE", err)
		}
		if _, err := s.Write([]byte("x")); !isResetOrPipe(err) {
			t.Errorf("Write after the reset = %v, want ECONNRESET or EPIPE", err)
		}
		// The callbacks heard of the reset twice: the read's error and the
		// Send's (the other writes had waiters, who heard of it).
		for range 2 {
			if call := cs.Next(t); !isResetOrPipe(call.Err) {
				t.Errorf("notification after the reset: %v, %v; want the reset", call.Result, call.Err)
			}
		}
		uv.UvtMust(t, v.u.Call(func() {})) // a later turn
		if n := cs.N(); n != 2 {
			t.Errorf("%d notifications, want 2: %v", n, cs.Calls())
		}
		v.finish(t, s)
	})
}

// TestIOCloseInWriteFailure: a callback that closes its IO on the
// first error it hears (the reset, or a queued Send failing) hears
// nothing more: not the failures of the other Sends queued, not its own
// close.
func TestIOCloseInWriteFailure(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		s, nc := resetPeer(t, v)
		var errs []error // loop-owned
		closed := make(chan struct{})
		_, err := event.Subscribe(s, func(ev event.Event, res any, err error) {
			if err == nil {
				return
			}
			errs = append(errs, err)
			if len(errs) == 1 {
				uv.UvtMust(t, ev.Close())
				close(closed)
			}
		})
		uv.UvtMust(t, err)
		uv.UvtMust(t, s.Start())
		uv.UvtMust(t, s.SetHighWaterMark(math.MaxInt)) // queue 32 MiB on purpose
		for range 8 {
			uv.UvtMust(t, s.Send(make([]byte, 4<<20)))
		}
		uv.UvtMust(t, nc.Close())
		uv.UvtRecv(t, closed, "the first error")
		uv.UvtMust(t, v.u.Call(func() {
			if len(errs) != 1 || !isResetOrPipe(errs[0]) {
				t.Errorf("errors heard: %v; want the one reset that closed", errs)
			}
		}))
		v.finish(t)
	})
}

// TestIOBackpressure: writing to a peer that does not read: Queued
// grows with each Send, a Write waits, and its deadline fails it having
// written only part; what was queued and the n bytes that Write reports
// still go out once the peer reads, whole and in order, and nothing more,
// then the end of the stream after CloseWrite (which waits for the queue).
func TestIOBackpressure(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		c, s := v.pair(t)
		data := pattern(12 << 20)
		chunks := [][]byte{data[:8<<20], data[8<<20 : 9<<20], data[9<<20:]}
		uv.UvtMust(t, c.SetHighWaterMark(math.MaxInt)) // Queued grows past 1 MiB on purpose
		uv.UvtMust(t, c.Send(chunks[0]))
		q1 := c.Queued()
		uv.UvtMust(t, c.Send(chunks[1]))
		if q2 := c.Queued(); q1 == 0 || q2 != q1+len(chunks[1]) {
			t.Errorf("Queued = %d then %d after another %d bytes", q1, q2, len(chunks[1]))
		}
		uv.UvtMust(t, c.SetWriteDeadline(time.Now().Add(10*time.Millisecond)))
		n, err := c.Write(chunks[2])
		checkTimeout(t, "Write to a peer that does not read", err)
		if n >= len(chunks[2]) {
			t.Errorf("the timed-out Write reports %d of %d bytes written", n, len(chunks[2]))
		}
		uv.UvtMust(t, c.SetWriteDeadline(time.Time{}))
		shut := make(chan error, 1)
		go func() { shut <- c.CloseWrite() }()
		got, err := io.ReadAll(s)
		want := data[:9<<20+n]
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("the peer read %d bytes (%v), want the %d queued and written, in order", len(got), err, len(want))
		}
		uv.UvtMust(t, uv.UvtRecv(t, shut, "CloseWrite"))
		if q := c.Queued(); q != 0 {
			t.Errorf("Queued = %d once everything went out", q)
		}
		v.finish(t, c, s)
	})
}
