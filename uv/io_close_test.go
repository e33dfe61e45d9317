package uv_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/eventkind"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
	"golang.org/x/sys/unix"
)

// TestIOCloseParked: Close from another goroutine while a Read, a
// Write, a CloseWrite (behind the Write's queue), a ReadAsync and a
// WriteAsync wait: each fails with an error matching net.ErrClosed and
// event.ErrClosed, and nothing is left.
func TestIOCloseParked(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		c, s := v.pair(t) // s never reads: c's writes wait
		base := v.u.Stats().Active
		errs := make(chan error, 3)
		go func() {
			_, err := c.Read(make([]byte, 10))
			errs <- err
		}()
		go func() {
			_, err := c.Write(make([]byte, 32<<20))
			errs <- err
		}()
		uv.UvtWaitFor(t, "the Write to queue", func() bool { return c.Queued() > 0 })
		rf, err := c.ReadAsync(10)
		uv.UvtMust(t, err)
		wf, err := c.WriteAsync(make([]byte, 1<<20))
		uv.UvtMust(t, err)
		go func() { errs <- c.CloseWrite() }() // later writes would be refused
		// Parked readers count active.
		uv.UvtWaitFor(t, "both reads to park", func() bool { return v.u.Stats().Active >= base+2 })
		closed := make(chan error, 1)
		go func() { closed <- c.Close() }()
		uv.UvtMust(t, uv.UvtRecv(t, closed, "Close"))
		check := func(what string, err error) {
			t.Helper()
			if !errors.Is(err, net.ErrClosed) || !errors.Is(err, event.ErrClosed) {
				t.Errorf("%s after Close = %v, want ErrClosed", what, err)
			}
		}
		for range 3 {
			check("a parked call", uv.UvtRecv(t, errs, "a parked call's end"))
		}
		ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
		defer cancel()
		_, err = rf.Await(ctx)
		check("ReadAsync", err)
		_, err = wf.Await(ctx)
		check("WriteAsync", err)
		if n := c.Queued(); n != 0 {
			t.Errorf("Queued after Close = %d", n)
		}
		v.finish(t, s)
	})
}

// burst writes n pattern bytes to s on a goroutine; the channel gets the
// Write's error.
func burst(s *uv.IO, data []byte) <-chan error {
	done := make(chan error, 1)
	go func() {
		_, err := s.Write(data)
		done <- err
	}()
	return done
}

// TestIOStopMidBurst: a callback that stops its IO on the first
// bytes of a burst gets no further notification, though the reactor goes
// on reading ahead; what it did not get is read next with Read, whole and
// in order; started again, the IO gets the rest through its callbacks.
func TestIOStopMidBurst(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		c, s := v.pair(t)
		data := pattern(3 << 20)
		var got []byte // loop-owned until stopped
		calls := 0
		stopped := make(chan struct{})
		_, err := event.Subscribe(c, func(ev event.Event, res any, err error) {
			calls++
			if b, ok := readOf(res); ok {
				got = append(got, b...)
			}
			if calls == 1 {
				uv.UvtMust(t, ev.Stop())
				close(stopped)
			}
		})
		uv.UvtMust(t, err)
		uv.UvtMust(t, c.Start())
		sent := burst(s, data)
		uv.UvtRecv(t, stopped, "the first notification")
		// Half of the rest through Read, while the writer still writes.
		var n, callsThen int
		uv.UvtMust(t, v.u.Call(func() { n, callsThen = len(got), calls }))
		half := make([]byte, (len(data)-n)/2)
		if _, err := io.ReadFull(c, half); err != nil {
			t.Fatalf("Read after Stop: %v", err)
		}
		if callsThen != 1 {
			t.Errorf("%d notifications by the time Stop returned, want 1", callsThen)
		}
		var after int
		uv.UvtMust(t, v.u.Call(func() {
			after = calls
			got = append(got, half...)
			uv.UvtMust(t, c.Start())
		}))
		if after != 1 {
			t.Errorf("%d notifications after Stop, want none", after-1)
		}
		uv.UvtMust(t, uv.UvtRecv(t, sent, "the writer's end"))
		uv.UvtMust(t, s.CloseWrite())
		uv.UvtWaitFor(t, "every byte", func() bool {
			var k int
			v.u.Call(func() { k = len(got) })
			return k >= len(data)
		})
		uv.UvtMust(t, v.u.Call(func() {
			if !bytes.Equal(got, data) {
				t.Errorf("callbacks and Read got %d bytes that differ from the %d sent", len(got), len(data))
			}
		}))
		v.finish(t, c, s)
	})
}

// TestIOCloseInReadCallback: a callback closing its IO on the first
// bytes of a burst is told nothing more (neither the rest of the pass's
// reads nor the close it made), the writer fails once the peer's socket
// is gone, and nothing is left.
func TestIOCloseInReadCallback(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		c, s := v.pair(t)
		calls := 0
		closed := make(chan struct{})
		_, err := event.Subscribe(c, func(ev event.Event, res any, err error) {
			calls++
			if calls == 1 {
				uv.UvtMust(t, ev.Close())
				close(closed)
			}
		})
		uv.UvtMust(t, err)
		uv.UvtMust(t, c.Start())
		sent := burst(s, pattern(16<<20))
		uv.UvtRecv(t, closed, "the first notification")
		if err := uv.UvtRecv(t, sent, "the writer's end"); !errors.Is(err, syscall.ECONNRESET) && !errors.Is(err, syscall.EPIPE) {
			t.Errorf("Write to a peer that closed = %v, want ECONNRESET or EPIPE", err)
		}
		var n int
		uv.UvtMust(t, v.u.Call(func() { n = calls }))
		if n != 1 {
			t.Errorf("%d notifications, want the 1 that closed", n)
		}
		if _, err := c.Read(make([]byte, 1)); !errors.Is(err, net.ErrClosed) {
			t.Errorf("Read after the callback closed = %v, want ErrClosed", err)
		}
		v.finish(t, s)
	})
}

// TestIOReadAsyncClosed: a read request closed before bytes come
// takes none of them: the next Read gets them all.
func TestIOReadAsyncClosed(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		c, s := v.pair(t)
		f, err := c.ReadAsync(3)
		uv.UvtMust(t, err)
		uv.UvtMust(t, f.Close())
		if _, err := s.Write([]byte("abcdef")); err != nil {
			t.Fatal(err)
		}
		b := make([]byte, 6)
		read := func() error { _, err := io.ReadFull(c, b); return err }
		if err := within(t, "the Read", read); err != nil || string(b) != "abcdef" {
			t.Errorf("Read after a closed read request = %q, %v; want \"abcdef\"", b, err)
		}
		v.finish(t, c, s)
	})
}

// TestIOCloseInWriteCompletion: a write request's callback closes the
// IO while later writes wait behind it: those fail with ErrClosed, the
// ones before it succeeded, and the peer reads a prefix of the bytes (all
// of the first writes', then the end of the stream). A write that completed
// in the same turn as the closer, before its callback ran, stays a success:
// its bytes were sent.
func TestIOCloseInWriteCompletion(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		c, s := v.pair(t)
		const n, size, closer = 48, 1 << 20, 2 // more than the socket buffers hold (4 MiB + 32 MiB at most)
		data := pattern(n * size)
		futures := make([]*event.Future[int], n)
		uv.UvtMust(t, v.u.Call(func() {
			for i := range futures {
				f, err := c.WriteAsync(data[i*size : (i+1)*size])
				uv.UvtMust(t, err)
				futures[i] = f
			}
			_, err := event.Subscribe(futures[closer], func(event.Event, any, error) { c.Close() })
			uv.UvtMust(t, err)
		}))
		got, err := io.ReadAll(s)
		if err != nil || len(got) < (closer+1)*size || !bytes.Equal(got, data[:len(got)]) {
			t.Errorf("the peer read %d bytes (%v), want a prefix of the writes of %d bytes at least", len(got), err, (closer+1)*size)
		}
		ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
		defer cancel()
		closed := false // a write after the closer failed: so must all later ones
		for i, f := range futures {
			k, err := f.Await(ctx)
			switch {
			case i <= closer && (err != nil || k != size):
				t.Errorf("write %d = %d, %v; want %d", i, k, err, size)
			case i <= closer:
			case errors.Is(err, net.ErrClosed):
				closed = true
			case closed || err != nil || k != size:
				t.Errorf("write %d after the close = %d, %v; want ErrClosed", i, k, err)
			case len(got) < (i+1)*size:
				// It had completed in the same turn as the closer, before
				// the close: its bytes were sent, so the peer has them.
				t.Errorf("write %d completed but the peer read only %d bytes", i, len(got))
			}
		}
		if !closed {
			t.Errorf("every write after the closer succeeded; want the last ones to fail with ErrClosed")
		}
		v.finish(t, s)
	})
}

// TestIOStopOtherInPass: two IOs with bytes waiting, started
// together; the first callback to run stops the other (or closes it): the
// other hears nothing of what the same pass read for it (architecture §2,
// rule 5), and its bytes wait for a Read.
func TestIOStopOtherInPass(t *testing.T) {
	for _, closeIt := range []bool{false, true} {
		name := map[bool]string{false: "stop", true: "close"}[closeIt]
		t.Run(name, func(t *testing.T) {
			uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
				stop := uv.UvtServe(t, u)
				var ends [2]*uv.IO
				var peers [2]*uv.IO
				for i := range ends {
					a, b, err := uv.Pipe(u.Reactor)
					uv.UvtMust(t, err)
					ends[i], peers[i] = a, b
					_, err = b.Write([]byte("xy"))
					uv.UvtMust(t, err)
				}
				heard := 0 // loop-owned
				first := make(chan int, 1)
				uv.UvtMust(t, u.Call(func() {
					for i, c := range ends {
						other := ends[1-i]
						_, err := event.Subscribe(c, func(_ event.Event, res any, err error) {
							if err != nil {
								return // the close of the other
							}
							if heard++; heard == 1 {
								if closeIt {
									other.Close()
								} else {
									other.Stop()
								}
								first <- i
							}
						})
						uv.UvtMust(t, err)
						uv.UvtMust(t, c.Start())
					}
				}))
				i := uv.UvtRecv(t, first, "the first callback")
				n := 0
				uv.UvtMust(t, u.Call(func() { n = heard }))
				if n != 1 {
					t.Errorf("%d notifications, want 1: the other IO was told after it was stopped", n)
				}
				if !closeIt {
					b := make([]byte, 2)
					if k, err := io.ReadFull(ends[1-i], b); k != 2 || err != nil || string(b) != "xy" {
						t.Errorf("Read on the IO stopped = %q, %v; want its bytes", b[:k], err)
					}
				}
				for _, c := range append(ends[:], peers[:]...) {
					c.Close()
				}
				stop()
				uv.UvtShutdown(t, u, false)
			})
		})
	}
}

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

// resetConn dials addr with the standard library and resets the
// connection (SO_LINGER 0: the close sends a RST), returning the address
// it had.
func resetConn(t *testing.T, network, addr string) string {
	t.Helper()
	c, err := net.Dial(network, addr)
	uv.UvtMust(t, err)
	local := c.LocalAddr().String()
	uv.UvtMust(t, c.(*net.TCPConn).SetLinger(0))
	uv.UvtMust(t, c.Close())
	return local
}

// TestRemoteAddrOfResetConnection: an accepted connection keeps its
// peer's address once the peer has reset it, as package net's do, whether
// the reset comes before the accept or after it (getpeername(2) then
// fails with ENOTCONN): RemoteAddr is never nil for an accepted TCP
// connection, over IPv4 and IPv6.
func TestRemoteAddrOfResetConnection(t *testing.T) {
	eachNetwork(t, func(t *testing.T, v *ioEnv) {
		ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
		defer cancel()
		// Reset before the accept: the connection waits in the backlog.
		want := resetConn(t, v.network, v.ln.Addr().String())
		s, err := v.ln.AcceptIO(ctx)
		uv.UvtMust(t, err)
		got := ""
		if a := s.RemoteAddr(); a != nil {
			got = a.String()
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("RemoteAddr of a connection reset before its accept (-want +got):\n%s", diff)
		}
		uv.UvtMust(t, s.Close())

		// Reset after the accept, the address not read before.
		acc := make(chan *uv.IO, 1)
		go func() {
			s, err := v.ln.AcceptIO(ctx)
			if err != nil {
				t.Errorf("AcceptIO: %v", err)
			}
			acc <- s
		}()
		c, err := net.Dial(v.network, v.ln.Addr().String())
		uv.UvtMust(t, err)
		s = uv.UvtRecv(t, acc, "the accepted connection")
		if s == nil {
			t.FailNow()
		}
		want = c.LocalAddr().String()
		uv.UvtMust(t, c.(*net.TCPConn).SetLinger(0))
		uv.UvtMust(t, c.Close())
		if _, err := s.Read(make([]byte, 1)); err == nil {
			t.Fatal("Read from a reset connection succeeded")
		}
		got = ""
		if a := s.RemoteAddr(); a != nil {
			got = a.String()
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("RemoteAddr of a connection reset after its accept (-want +got):\n%s", diff)
		}
		v.finish(t, s)
	})
}

// heldConnect returns the address of a listening socket whose queue is
// full (one connection, first, waits in it, never accepted): a connect to
// it stays in flight, the kernel dropping its SYNs until the queue has
// room. lfd is the socket, for the test to accept from.
func heldConnect(t *testing.T) (addr string, lfd int, first net.Conn) {
	t.Helper()
	lfd, err := uv.UvtSocket(unix.AF_INET, unix.SOCK_STREAM, 0)
	uv.UvtMust(t, err)
	t.Cleanup(func() { unix.Close(lfd) })
	uv.UvtMust(t, unix.Bind(lfd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}))
	uv.UvtMust(t, unix.Listen(lfd, 0))
	sa, err := unix.Getsockname(lfd)
	uv.UvtMust(t, err)
	addr = fmt.Sprintf("127.0.0.1:%d", sa.(*unix.SockaddrInet4).Port)
	first, err = net.Dial("tcp4", addr)
	uv.UvtMust(t, err)
	t.Cleanup(func() { first.Close() })
	return addr, lfd, first
}

// TestIOReactorCloseInFlight: the reactor closes while connects,
// an Accept, reads, a write and a shutdown wait: every waiter gets an
// error matching ErrClosed or ErrReactorClosed, no handle is left, and no
// goroutine (the pure-Go driver's poller among them) nor descriptor
// outlives the reactor.
func TestIOReactorCloseInFlight(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		base, fds := uv.UvtBaseline(t)
		held, _, _ := heldConnect(t)
		fds += 2 // the held listener and its queued connection
		u := uv.UvtNewReactorOn(t, d)
		served := make(chan error, 1)
		go func() { served <- u.Serve(context.Background()) }()
		errs := make(chan error, 8)
		wait := func(f func() error) { go func() { errs <- f() }() }

		df, err := uv.DialAsync(u.Reactor, "tcp4", held)
		uv.UvtMust(t, err)
		wait(func() error { _, err := uv.Dial(context.Background(), u.Reactor, "tcp4", held); return err })
		ln, err := uv.Listen(u.Reactor, "tcp4", "127.0.0.1:0")
		uv.UvtMust(t, err)
		wait(func() error { _, err := ln.AcceptIO(context.Background()); return err })
		a, a2, err := uv.Pipe(u.Reactor) // a2 and b2 stay open, silent
		uv.UvtMust(t, err)
		b, b2, err := uv.Pipe(u.Reactor)
		uv.UvtMust(t, err)
		defer runtime.KeepAlive([]*uv.IO{a2, b2})
		wait(func() error { _, err := a.Read(make([]byte, 1)); return err })
		rf, err := a.ReadAsync(1)
		uv.UvtMust(t, err)
		wait(func() error { _, err := b.Write(make([]byte, 16<<20)); return err }) // nobody reads it
		uv.UvtWaitFor(t, "the Write to queue", func() bool { return b.Queued() > 0 })
		wait(b.CloseWrite)
		uv.UvtWaitFor(t, "the Accept to start the listener", func() bool { return eventkind.LoopRefs(ln) > 0 })

		uv.UvtMust(t, u.Close())
		if err := uv.UvtRecv(t, served, "Serve's return"); err != nil && !errors.Is(err, reactor.ErrReactorClosed) {
			t.Errorf("Serve returned %v", err)
		}
		check := func(what string, err error) {
			t.Helper()
			if !errors.Is(err, net.ErrClosed) && !errors.Is(err, reactor.ErrReactorClosed) {
				t.Errorf("%s at the reactor's Close = %v, want ErrClosed or ErrReactorClosed", what, err)
			}
		}
		for range 5 {
			check("a waiting call", uv.UvtRecv(t, errs, "a waiting call's end"))
		}
		_, done, err := df.Outcome()
		if !done {
			t.Error("DialAsync not completed by the reactor's Close")
		}
		check("DialAsync", err)
		_, done, err = rf.Outcome()
		if !done {
			t.Error("ReadAsync not completed by the reactor's Close")
		}
		check("ReadAsync", err)
		uv.UvtShutdown(t, u, false)
		// A closed reactor refuses new IOs and listeners, leaving nothing.
		if _, err := uv.Dial(context.Background(), u.Reactor, "tcp4", held); !errors.Is(err, reactor.ErrReactorClosed) {
			t.Errorf("Dial on a closed reactor = %v, want ErrReactorClosed", err)
		}
		if _, err := uv.Listen(u.Reactor, "tcp4", "127.0.0.1:0"); !errors.Is(err, reactor.ErrReactorClosed) {
			t.Errorf("Listen on a closed reactor = %v, want ErrReactorClosed", err)
		}
		if _, _, err := uv.Pipe(u.Reactor); !errors.Is(err, reactor.ErrReactorClosed) {
			t.Errorf("Pipe on a closed reactor = %v, want ErrReactorClosed", err)
		}
		uv.UvtNoLeaks(t, base, fds)
	})
}

// TestIODroppedBusy: IOs and Listeners dropped without Close while
// stopped but holding resources, under GOGC=10: a stopped listener with
// connections in its queue, one started and stopped again with a dial in
// flight to it, an IO started and stopped again, a pipe(2) end. (A started
// one is the reactor's, docs/architecture.md §5, and so is an IO with a write in
// flight.) Once the dial completes, the collector closes them all:
// no handle is left, the clients queued read the end of the stream, and
// once the reactor is closed no goroutine or descriptor outlives it.
func TestIODroppedBusy(t *testing.T) {
	defer debugGC(10)()
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		base, fds := uv.UvtBaseline(t)
		u := uv.UvtNewReactorOn(t, d)
		start := handlesLeft(u)
		var clients []net.Conn
		var pipeW int
		func() {
			stopped, err := uv.Listen(u.Reactor, "tcp4", "127.0.0.1:0")
			uv.UvtMust(t, err)
			for range 3 {
				c, err := net.Dial("tcp4", stopped.Addr().String())
				uv.UvtMust(t, err)
				clients = append(clients, c)
			}
			started, err := uv.Listen(u.Reactor, "tcp4", "127.0.0.1:0")
			uv.UvtMust(t, err)
			_, err = event.Subscribe(started, func(event.Event, any, error) {})
			uv.UvtMust(t, err)
			uv.UvtMust(t, started.Start())
			uv.UvtMust(t, started.Stop())
			f, err := uv.DialAsync(u.Reactor, "tcp4", started.Addr().String())
			uv.UvtMust(t, err)
			// Its listener may go first (a reset): the error is heard.
			_, err = event.Subscribe(f, func(event.Event, any, error) {})
			uv.UvtMust(t, err)
			a, b, err := uv.Pipe(u.Reactor)
			uv.UvtMust(t, err)
			_, err = event.Subscribe(a, func(event.Event, any, error) {})
			uv.UvtMust(t, err)
			uv.UvtMust(t, a.Start())
			uv.UvtMust(t, a.Stop())
			runtime.KeepAlive(b)
			var p [2]int
			uv.UvtMust(t, uv.UvtPipe2(p[:], unix.O_CLOEXEC))
			_, err = uv.OpenPipe(u.Reactor, p[0])
			uv.UvtMust(t, err)
			pipeW = p[1]
		}()
		uv.UvtCollectUntil(t, u, "the dropped IOs' and listeners' handles", func() bool {
			return handlesLeft(u) == start
		})
		for _, c := range clients {
			if n, err := c.Read(make([]byte, 1)); n != 0 || err == nil {
				t.Errorf("a client queued at a dropped listener read %d, %v; want its end", n, err)
			}
			c.Close()
		}
		unix.Close(pipeW)
		uv.UvtShutdown(t, u, false)
		uv.UvtNoLeaks(t, base, fds)
	})
}

// lingerSize is what the lingering tests send: more than loopback's socket
// buffers take, so that most of it is still queued in the IO at Close.
const lingerSize = 24 << 20

// lingerData is lingerSize bytes of a pattern a reader can check.
func lingerData() []byte {
	p := make([]byte, lingerSize)
	for i := range p {
		p[i] = byte(i % 251)
	}
	return p
}

// lingerEnv is a served reactor and a TCP connection between one of its
// IOs and a net.Conn peer outside it: the IO is the dialed end or the
// accepted one.
type lingerEnv struct {
	u    *uv.UvtReactor
	stop func()
	io   *uv.IO
	peer net.Conn
	ln   io.Closer // the listener of the accepted end, or the peer's
}

// lingerEachEnd runs f on each driver, for an IO that dialed its peer and
// for one its listener accepted.
func lingerEachEnd(t *testing.T, f func(t *testing.T, v *lingerEnv)) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		for _, end := range []string{"dialed", "accepted"} {
			t.Run(end, func(t *testing.T) {
				u := uv.UvtNewReactorOn(t, d)
				v := &lingerEnv{u: u, stop: uv.UvtServe(t, u)}
				ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
				defer cancel()
				var err error
				if end == "dialed" {
					ln, lerr := net.Listen("tcp4", "127.0.0.1:0")
					uv.UvtMust(t, lerr)
					defer ln.Close()
					v.ln = ln
					acc := make(chan net.Conn, 1)
					go func() {
						c, _ := ln.Accept()
						acc <- c
					}()
					v.io, err = uv.Dial(ctx, u.Reactor, "tcp4", ln.Addr().String())
					uv.UvtMust(t, err)
					v.peer = uv.UvtRecv(t, acc, "the accepted peer")
				} else {
					ln, lerr := uv.Listen(u.Reactor, "tcp4", "127.0.0.1:0")
					uv.UvtMust(t, lerr)
					defer ln.Close()
					v.ln = ln
					acc := make(chan *uv.IO, 1)
					go func() {
						c, _ := ln.AcceptIO(ctx)
						acc <- c
					}()
					v.peer, err = net.Dial("tcp4", ln.Addr().String())
					uv.UvtMust(t, err)
					v.io = uv.UvtRecv(t, acc, "the accepted IO")
				}
				if v.io == nil || v.peer == nil {
					t.FailNow()
				}
				defer v.peer.Close()
				f(t, v)
			})
		}
	})
}

// sendAll queues p on the IO in one Send, and checks that part of it is
// still queued (the close to come has something to linger for).
func (v *lingerEnv) sendAll(t *testing.T, p []byte) {
	t.Helper()
	uv.UvtMust(t, v.io.SetHighWaterMark(2*len(p)))
	uv.UvtMust(t, v.io.Send(p))
	if q := v.io.Queued(); q == 0 {
		t.Fatalf("Queued after a %d-byte Send to a peer not reading = 0: nothing to linger for", len(p))
	}
}

// drops returns the DropErrors reported so far.
func drops(u *uv.UvtReactor) []*uv.DropError {
	var ds []*uv.DropError
	for _, r := range u.Reports() {
		var d *uv.DropError
		if errors.As(r.Err, &d) {
			ds = append(ds, d)
		}
	}
	return ds
}

// waitDrop waits for the one drop report and checks it: some bytes
// dropped, a reset, and its cause.
func waitDrop(t *testing.T, u *uv.UvtReactor, cause error) {
	t.Helper()
	uv.UvtWaitFor(t, "the drop report", func() bool { return len(drops(u)) > 0 })
	checkDrop(t, u, cause)
}

// checkDrop checks the drop reports made so far: one, some bytes dropped,
// a reset, and its cause.
func checkDrop(t *testing.T, u *uv.UvtReactor, cause error) {
	t.Helper()
	ds := drops(u)
	if len(ds) != 1 || ds[0].Bytes <= 0 || !ds[0].Reset || !errors.Is(ds[0], uv.ErrDropped) || !errors.Is(ds[0], cause) {
		t.Errorf("drop reports = %v, want one reset with bytes dropped matching ErrDropped and %v", ds, cause)
	}
}

// readToReset reads the peer until it fails, and checks it failed with a
// reset, not the clean end a loss must never look like.
func readToReset(t *testing.T, peer net.Conn) {
	t.Helper()
	peer.SetReadDeadline(time.Now().Add(uv.UvtSafety))
	n, err := io.Copy(io.Discard, peer)
	if !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("peer read %d bytes then %v, want ECONNRESET (a reset, not a clean end)", n, err)
	}
	if n >= lingerSize {
		t.Errorf("peer read all %d bytes although the close dropped some", n)
	}
}

// TestIOCloseLingers: Close right after a Send of much more than the
// socket takes, to a peer that reads slowly: Close returns at once, the
// peer reads every byte in order and then the end of the stream; nothing
// is reported, and the lingering close keeps Run going until it is over.
func TestIOCloseLingers(t *testing.T) {
	lingerEachEnd(t, func(t *testing.T, v *lingerEnv) {
		want := lingerData()
		base := v.u.Stats().Active
		v.sendAll(t, want)
		uv.UvtMust(t, v.io.Close())
		if a := v.u.Stats().Active; a <= base {
			t.Errorf("active while lingering = %d, want above %d: Run would end with bytes queued", a, base)
		}
		got := make([]byte, 0, len(want))
		buf := make([]byte, 32<<10)
		v.peer.SetReadDeadline(time.Now().Add(uv.UvtSafety))
		for i := 0; ; i++ {
			if i%64 == 0 {
				time.Sleep(time.Millisecond) // a slow reader
			}
			n, err := v.peer.Read(buf)
			got = append(got, buf[:n]...)
			if err == io.EOF {
				break
			}
			uv.UvtMust(t, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("peer read %d bytes, want the %d sent, in order", len(got), len(want))
		}
		uv.UvtWaitFor(t, "the lingering close to end", func() bool { return v.u.Stats().Active == base })
		if ds := drops(v.u); len(ds) > 0 {
			t.Errorf("drops reported after a complete linger: %v", ds)
		}
		in, out, _ := v.io.Stats()
		if in != 0 || out != uint64(len(want)) {
			t.Errorf("Stats = in %d, out %d; want 0, %d", in, out, len(want))
		}
		v.stop()
		uv.UvtShutdown(t, v.u, false)
	})
}

// TestIOCloseLingerTimesOut: Close after a Send to a peer that never
// reads, with a short linger time: the connection is reset, the peer reads
// ECONNRESET (never a clean end), and the drop is reported with its byte
// count, matching os.ErrDeadlineExceeded.
func TestIOCloseLingerTimesOut(t *testing.T) {
	lingerEachEnd(t, func(t *testing.T, v *lingerEnv) {
		base := v.u.Stats().Active
		uv.UvtMust(t, v.io.SetLinger(50*time.Millisecond))
		v.sendAll(t, lingerData())
		uv.UvtMust(t, v.io.Close())
		waitDrop(t, v.u, os.ErrDeadlineExceeded)
		readToReset(t, v.peer)
		uv.UvtWaitFor(t, "the lingering close to end", func() bool { return v.u.Stats().Active == base })
		v.stop()
		uv.UvtShutdown(t, v.u, true)
	})
}

// TestIOAbort: Abort with bytes queued resets the connection at once: the
// peer reads ECONNRESET, and the drop is reported, matching ErrAborted.
// Abort after Close cuts a lingering close short the same way, and Close
// with a linger time of 0 is Abort.
func TestIOAbort(t *testing.T) {
	for _, how := range []string{"open", "lingering", "linger0"} {
		t.Run(how, func(t *testing.T) {
			lingerEachEnd(t, func(t *testing.T, v *lingerEnv) {
				if how == "linger0" {
					uv.UvtMust(t, v.io.SetLinger(0))
				}
				v.sendAll(t, lingerData())
				switch how {
				case "lingering":
					uv.UvtMust(t, v.io.Close())
					if ds := drops(v.u); len(ds) > 0 {
						t.Fatalf("drops reported by Close within the linger time: %v", ds)
					}
					uv.UvtMust(t, v.io.Abort())
				case "linger0":
					uv.UvtMust(t, v.io.Close())
				default:
					uv.UvtMust(t, v.io.Abort())
				}
				waitDrop(t, v.u, uv.ErrAborted)
				readToReset(t, v.peer)
				v.stop()
				uv.UvtShutdown(t, v.u, true)
			})
		})
	}
}

// TestIOCloseLingerReactorClose: the reactor's Close with a lingering
// close pending (a peer that never reads) waits for it within its linger
// time, then resets it; the drop is reported by the time Close returns.
func TestIOCloseLingerReactorClose(t *testing.T) {
	lingerEachEnd(t, func(t *testing.T, v *lingerEnv) {
		uv.UvtMust(t, v.io.SetLinger(200*time.Millisecond))
		v.sendAll(t, lingerData())
		uv.UvtMust(t, v.io.Close())
		v.stop()
		uv.UvtShutdown(t, v.u, true)
		checkDrop(t, v.u, os.ErrDeadlineExceeded)
		readToReset(t, v.peer)
	})
}

// TestIOCloseNothingQueued: Close with nothing queued ends the stream
// cleanly at once, as before: the peer reads what was sent, then the end
// of the stream; nothing is reported, nothing lingers. SetLinger after
// Close fails with ErrClosed.
func TestIOCloseNothingQueued(t *testing.T) {
	lingerEachEnd(t, func(t *testing.T, v *lingerEnv) {
		uv.UvtMust(t, v.io.SetLinger(-1)) // the default again
		base := v.u.Stats().Active
		uv.UvtMust(t, v.io.Send([]byte("bye")))
		uv.UvtWaitFor(t, "the Send to go out", func() bool { return v.io.Queued() == 0 })
		uv.UvtMust(t, v.io.Close())
		if a := v.u.Stats().Active; a != base {
			t.Errorf("active after Close = %d, want %d: nothing lingers", a, base)
		}
		v.peer.SetReadDeadline(time.Now().Add(uv.UvtSafety))
		got, err := io.ReadAll(v.peer)
		if err != nil || string(got) != "bye" {
			t.Errorf("peer read %q, %v; want \"bye\", then the end of the stream", got, err)
		}
		if err := v.io.SetLinger(time.Second); !errors.Is(err, uv.ErrClosed) {
			t.Errorf("SetLinger after Close = %v, want ErrClosed", err)
		}
		v.stop()
		uv.UvtShutdown(t, v.u, false)
	})
}

// unixLingerPair returns an IO over one end of a Unix socket pair, and the
// other end as a net.Conn outside the reactor.
func unixLingerPair(t *testing.T, u *uv.UvtReactor) (*uv.IO, net.Conn) {
	t.Helper()
	fds, err := uv.UvtSocketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	uv.UvtMust(t, err)
	return unixPairOf(t, u, fds)
}

// unixPairOf is unixLingerPair over fds, a Unix socket pair: the IO over
// fds[0], fds[1] as the net.Conn peer.
func unixPairOf(t *testing.T, u *uv.UvtReactor, fds [2]int) (*uv.IO, net.Conn) {
	t.Helper()
	c, err := uv.OpenPipe(u.Reactor, fds[0])
	if err != nil {
		unix.Close(fds[0])
		unix.Close(fds[1])
		t.Fatalf("OpenPipe: %v", err)
	}
	f := os.NewFile(uintptr(fds[1]), "peer")
	peer, err := net.FileConn(f)
	f.Close()
	uv.UvtMust(t, err)
	t.Cleanup(func() { peer.Close() })
	return c, peer
}

// TestIOCloseLingersUnix: on a Unix socket, Close after a big Send lets
// the peer read every byte, then the end of the stream; a linger time that
// passes, and Abort, close at once (a Unix socket has no reset: the peer
// reads the end of the stream) and report the drop, not as a reset.
func TestIOCloseLingersUnix(t *testing.T) {
	for _, how := range []string{"complete", "timeout", "abort"} {
		t.Run(how, func(t *testing.T) {
			uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
				stop := uv.UvtServe(t, u)
				c, peer := unixLingerPair(t, u)
				want := lingerData()
				v := &lingerEnv{u: u, stop: stop, io: c, peer: peer}
				if how == "timeout" {
					uv.UvtMust(t, c.SetLinger(50*time.Millisecond))
				}
				v.sendAll(t, want)
				if how == "abort" {
					uv.UvtMust(t, c.Abort())
				} else {
					uv.UvtMust(t, c.Close())
				}
				if how != "complete" {
					uv.UvtWaitFor(t, "the drop report", func() bool { return len(drops(u)) > 0 })
				}
				peer.SetReadDeadline(time.Now().Add(uv.UvtSafety))
				got, err := io.ReadAll(peer)
				if err != nil {
					t.Errorf("peer read %d bytes then %v, want the end of the stream", len(got), err)
				}
				ds := drops(u)
				if how == "complete" {
					if !bytes.Equal(got, want) || len(ds) > 0 {
						t.Errorf("peer read %d bytes (equal: %v), drops %v; want all %d, none dropped", len(got), bytes.Equal(got, want), ds, len(want))
					}
				} else {
					cause := os.ErrDeadlineExceeded
					if how == "abort" {
						cause = uv.ErrAborted
					}
					if len(ds) != 1 || ds[0].Bytes <= 0 || ds[0].Reset || !errors.Is(ds[0], cause) || len(got) >= len(want) {
						t.Errorf("drops %v, peer read %d of %d; want one drop matching %v, not a reset, and fewer bytes", ds, len(got), len(want), cause)
					}
				}
				stop()
				uv.UvtShutdown(t, u, how != "complete")
			})
		})
	}
}

// TestIOCloseLingersHeldWrite: Close while a blocking Write's direct
// write(2) (the write lane) went out in part, its rest not yet taken by the
// loop, and a Send queued behind it: the Write returns what went out and
// ErrClosed, and the Send's bytes are not lost without a word. The peer
// reads what the Write wrote, then every byte of the Send, then the end of
// the stream, or else a reset (TCP) with the drop reported. The loop is
// held in one callback from the lane's partial write to the Close, so the
// Write's rest cannot reach it in between.
func TestIOCloseLingersHeldWrite(t *testing.T) {
	check := func(t *testing.T, v *lingerEnv) {
		if _, err := v.io.Write([]byte{1}); err != nil { // makes the lane
			t.Fatalf("first Write: %v", err)
		}
		big := lingerData()
		tail := bytes.Repeat([]byte("tail"), 1<<10)
		state, done := holdLaneThen(t, v.u, v.io, big, func() string {
			if err := v.io.Send(tail); err != nil {
				return "Send: " + err.Error()
			}
			if err := v.io.Close(); err != nil {
				return "Close: " + err.Error()
			}
			return ""
		})
		if state != "held" {
			v.io.Close()
			t.Fatalf("write lane %s, want a Write held in part with the peer not reading", state)
		}
		w := uv.UvtRecv(t, done, "the held Write's return at Close")
		if w.n <= 0 || w.n >= len(big) || !errors.Is(w.err, uv.ErrClosed) {
			t.Fatalf("held Write = %d, %v; want some of its %d bytes and ErrClosed", w.n, w.err, len(big))
		}
		want := append(append([]byte{1}, big[:w.n]...), tail...)
		v.peer.SetReadDeadline(time.Now().Add(uv.UvtSafety))
		got, err := io.ReadAll(v.peer)
		switch ds := drops(v.u); {
		case err == nil:
			if !bytes.Equal(got, want) || len(ds) > 0 {
				t.Errorf("peer read %d bytes (as sent: %v) then the end, drops %v; want the %d bytes written and sent, none dropped",
					len(got), bytes.Equal(got, want), ds, len(want))
			}
		case errors.Is(err, syscall.ECONNRESET):
			uv.UvtWaitFor(t, "the drop report of the reset", func() bool { return len(drops(v.u)) > 0 })
			checkDrop(t, v.u, os.ErrDeadlineExceeded)
		default:
			t.Errorf("peer read %d bytes then %v, want the end of the stream or a reset", len(got), err)
		}
		v.stop()
		uv.UvtShutdown(t, v.u, len(drops(v.u)) > 0)
	}
	t.Run("tcp", func(t *testing.T) { lingerEachEnd(t, check) })
	t.Run("unix", func(t *testing.T) {
		// A dialed Unix socket: OpenPipe's descriptors have no write lane.
		uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
			stop := uv.UvtServe(t, u)
			c, peer := dialedUnix(t, u)
			check(t, &lingerEnv{u: u, stop: stop, io: c, peer: peer})
		})
	})
}

// dialedUnix dials a Unix socket that package net listens on (in a
// directory of the test's): the IO, which has a write lane (OpenPipe's
// descriptors have none), and the accepted peer, closed at cleanup.
func dialedUnix(t *testing.T, u *uv.UvtReactor) (*uv.IO, net.Conn) {
	t.Helper()
	dir, err := os.MkdirTemp("", "uvheld")
	uv.UvtMust(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dialedPeer(t, u, "unix", dir+"/s")
}

// dialedPeer dials what package net listens on at addr of network: the
// IO, which has a write lane, and the accepted peer, closed at cleanup.
func dialedPeer(t *testing.T, u *uv.UvtReactor, network, addr string) (*uv.IO, net.Conn) {
	t.Helper()
	ln, err := net.Listen(network, addr)
	uv.UvtMust(t, err)
	defer ln.Close()
	acc := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		acc <- c
	}()
	ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
	defer cancel()
	c, err := uv.Dial(ctx, u.Reactor, network, ln.Addr().String())
	uv.UvtMust(t, err)
	peer := uv.UvtRecv(t, acc, "the accepted peer")
	if peer == nil {
		t.FailNow()
	}
	t.Cleanup(func() { peer.Close() })
	return c, peer
}

// heldWrite is the outcome of a blocking Write holdLaneThen started.
type heldWrite struct {
	n   int
	err error
}

// holdLaneThen, in one callback on c's loop, starts a blocking Write of
// big on a goroutine of its own, waits for its write lane write(2) to go
// out in part (the lane held, the rest not yet taken by the loop, which
// the callback holds), then runs then, whose non-empty answer says what
// failed. It returns the lane's state ("held" when all went so, else what
// it was, or then's answer) and where the Write's outcome comes. c's lane
// must be made (a first Write) and open.
func holdLaneThen(t *testing.T, u *uv.UvtReactor, c *uv.IO, big []byte, then func() string) (string, <-chan heldWrite) {
	t.Helper()
	done := make(chan heldWrite, 1)
	var state string
	uv.UvtMust(t, u.Call(func() {
		if state = uv.UvtLane(c); state != "open" {
			return
		}
		go func() {
			n, err := c.Write(big)
			done <- heldWrite{n, err}
		}()
		deadline := time.Now().Add(uv.UvtSafety)
		for state = uv.UvtLane(c); state != "held" && time.Now().Before(deadline); state = uv.UvtLane(c) {
			time.Sleep(100 * time.Microsecond)
		}
		if state != "held" {
			return // the Write waits for the loop: it returns once the callback does
		}
		if s := then(); s != "" {
			state = s
		}
	}))
	return state, done
}

// TestIOCloseLingerKeepsRun: a lingering close keeps Run going: Run,
// called once the IO is closed with bytes queued, returns only when every
// byte went to the socket, and the peer reads them all, then the end.
func TestIOCloseLingerKeepsRun(t *testing.T) {
	lingerEachEnd(t, func(t *testing.T, v *lingerEnv) {
		v.stop() // from here on only Run turns the loop
		v.ln.Close()
		want := lingerData()
		v.sendAll(t, want)
		uv.UvtMust(t, v.io.Close())
		got := make(chan []byte, 1)
		go func() {
			v.peer.SetReadDeadline(time.Now().Add(uv.UvtSafety))
			b, _ := io.ReadAll(v.peer)
			got <- b
		}()
		ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
		defer cancel()
		uv.UvtMust(t, v.u.Run(ctx))
		if _, out, _ := v.io.Stats(); out != uint64(len(want)) {
			t.Errorf("Run returned with %d of %d bytes written: the lingering close did not keep it going", out, len(want))
		}
		if b := uv.UvtRecv(t, got, "the peer's read to the end"); !bytes.Equal(b, want) {
			t.Errorf("peer read %d bytes, want the %d sent, in order", len(b), len(want))
		}
		uv.UvtShutdown(t, v.u, false)
	})
}

// TestIOCloseLingerShutdownResets: a Shutdown whose context ends while a
// lingering close still waits for a peer that never reads resets it then:
// Shutdown returns (the linger time, an hour, is far from over), its error
// names the reset, the drop is reported by then, the peer reads
// ECONNRESET, Serve has ended and the IO's socket is closed.
func TestIOCloseLingerShutdownResets(t *testing.T) {
	lingerEachEnd(t, func(t *testing.T, v *lingerEnv) {
		uv.UvtMust(t, v.io.SetLinger(time.Hour))
		v.sendAll(t, lingerData())
		sockets := openSockets(t)
		closed := 1 // the IO's socket
		if _, ok := v.ln.(*uv.Listener); ok {
			closed++ // and the reactor's listener
		}
		uv.UvtMust(t, v.io.Close())
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		ended := make(chan error, 1)
		go func() { ended <- v.u.Shutdown(ctx) }()
		err := uv.UvtRecv(t, ended, "Shutdown's return, its context over and the linger time not")
		if !errors.Is(err, reactor.ErrCloseIncomplete) || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "reset: the lingering close of") {
			t.Errorf("Shutdown = %v, want ErrCloseIncomplete and DeadlineExceeded naming the reset", err)
		}
		if err != nil && strings.Contains(err.Error(), "waiting for") {
			t.Errorf("Shutdown = %v: names as still running what it reset", err)
		}
		checkDrop(t, v.u, uv.ErrAborted) // reported by the time Shutdown returned
		readToReset(t, v.peer)
		v.stop() // Serve has ended: Shutdown stopped it
		uv.UvtShutdown(t, v.u, true)
		// At most: tests running in parallel may close sockets of their own.
		if n := openSockets(t); n > sockets-closed {
			t.Errorf("open sockets after Shutdown = %d, want at most %d (%d closed by it)", n, sockets-closed, closed)
		}
	})
}

// TestIOCloseLingerSecondShutdownResets: the reactor's Close, or a
// Shutdown with a long context, waits for a lingering close with an
// hour's linger time to a peer that never reads (a blocking Write parked
// on the full queue when the IO closed); a second Shutdown, whose context
// ends meanwhile, resets it: that Shutdown returns an error naming the
// reset, the drop is reported by then, and the first returns too.
func TestIOCloseLingerSecondShutdownResets(t *testing.T) {
	for _, first := range []string{"Close", "Shutdown"} {
		t.Run(first, func(t *testing.T) {
			lingerEachEnd(t, func(t *testing.T, v *lingerEnv) {
				uv.UvtMust(t, v.io.SetLinger(time.Hour))
				v.sendAll(t, lingerData())
				// The kernel may take several MiB of the Send before the
				// Write (its buffers grow on loopback), so the Write's
				// parking shows as the queue growing past what it held,
				// not past lingerSize: 4 MiB is more than the kernel
				// takes once its buffers are full.
				held := v.io.Queued()
				wrote := make(chan error, 1)
				go func() {
					_, err := v.io.Write(make([]byte, 4<<20))
					wrote <- err
				}()
				uv.UvtWaitFor(t, "the Write to park on the full queue", func() bool { return v.io.Queued() > held })
				uv.UvtMust(t, v.io.Close())
				if err := uv.UvtRecv(t, wrote, "the parked Write's return at Close"); !errors.Is(err, uv.ErrClosed) {
					t.Errorf("Write parked at Close = %v, want ErrClosed", err)
				}
				long, cancelLong := context.WithTimeout(context.Background(), uv.UvtSafety)
				defer cancelLong()
				ended := make(chan error, 1)
				go func() {
					if first == "Close" {
						ended <- v.u.Close()
					} else {
						ended <- v.u.Shutdown(long)
					}
				}()
				// The first has closed the reactor (it waits for the
				// lingering close from then on) once Post is refused.
				uv.UvtWaitFor(t, "the first "+first+" to close the reactor", func() bool {
					return errors.Is(v.u.Post(func() {}), reactor.ErrReactorClosed)
				})
				ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
				defer cancel()
				second := make(chan error, 1)
				go func() { second <- v.u.Shutdown(ctx) }()
				err := uv.UvtRecv(t, second, "the second Shutdown's return, its context over and the linger time not")
				if !errors.Is(err, reactor.ErrCloseIncomplete) || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "reset: the lingering close of") {
					t.Errorf("second Shutdown = %v, want ErrCloseIncomplete and DeadlineExceeded naming the reset", err)
				}
				checkDrop(t, v.u, uv.ErrAborted) // reported by the time the second Shutdown returned
				if err := uv.UvtRecv(t, ended, "the first "+first+"'s return once the lingering close was reset"); err != nil {
					t.Errorf("first %s = %v, want nil", first, err)
				}
				readToReset(t, v.peer)
				v.stop()
				uv.UvtShutdown(t, v.u, true)
			})
		})
	}
}

// fireLinger fires the libuv driver's linger timer of c now, on the loop,
// as if its linger time had passed, and reports whether c was lingering:
// the stream is reset and the timer's record waits for the next turn. Set
// in builds with the uvfaults tag (the shim's switch); nil without it.
var fireLinger func(c *uv.IO) bool

// TestIOCloseLingerTimerAndAbortInOneTurn: the linger time passes (the
// libuv driver's timer resets the stream) and an Abort comes in the same
// loop turn, before the timer's record is seen: the drop is reported once,
// by the Abort, as the timer's (os.ErrDeadlineExceeded, a reset, the
// bytes the reset dropped), and the record then reports nothing more.
func TestIOCloseLingerTimerAndAbortInOneTurn(t *testing.T) {
	lingerEachEnd(t, func(t *testing.T, v *lingerEnv) {
		if v.u.Driver() != reactor.DriverLibuv {
			t.Skip("the pure-Go driver's lingering close has no timer record: its linger time and an Abort end the one write it waits in (TestIOCloseLingerTimesOut, TestIOAbort)")
		}
		if fireLinger == nil {
			t.Skip("firing the linger timer needs the shim's fault switch: go test -tags uvfaults")
		}
		uv.UvtMust(t, v.io.SetLinger(time.Hour))
		v.sendAll(t, lingerData())
		uv.UvtMust(t, v.io.Close())
		fired := false
		uv.UvtMust(t, v.u.Call(func() {
			if fired = fireLinger(v.io); fired {
				v.io.Abort()
			}
		}))
		if !fired {
			t.Fatal("the IO was not lingering after Close with bytes queued")
		}
		checkDrop(t, v.u, os.ErrDeadlineExceeded) // by the Abort, at once
		readToReset(t, v.peer)
		v.stop()
		uv.UvtShutdown(t, v.u, true) // the timer's record is taken by now
		checkDrop(t, v.u, os.ErrDeadlineExceeded)
	})
}

// TestIOLaneReadClose: a connection read by blocking Reads (through its
// read lane: on the libuv driver a duplicate of the descriptor in Go's
// netpoller) ends as any other: Close wakes a Read waiting in the lane
// with ErrClosed, the peer reads the end of the stream (the duplicate
// holds nothing open), Abort resets it, and no descriptor is left.
func TestIOLaneReadClose(t *testing.T) {
	for _, how := range []string{"close", "abort"} {
		t.Run(how, func(t *testing.T) {
			ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
				before, dups := openFDs(t), uv.UvtLaneDups()
				c, s := v.pair(t)
				for i := range 3 { // the first Read makes the lane; the next take it
					_, err := s.Write([]byte{byte(i)})
					uv.UvtMust(t, err)
					if b := readN(t, c, 1); b[0] != byte(i) {
						t.Fatalf("Read %d = %d, want %d", i, b[0], i)
					}
				}
				waiting := make(chan error, 1)
				go func() {
					_, err := c.Read(make([]byte, 1))
					waiting <- err
				}()
				time.Sleep(10 * time.Millisecond) // let the Read wait (either outcome is checked)
				if how == "abort" {
					uv.UvtMust(t, c.Abort())
				} else {
					uv.UvtMust(t, c.Close())
				}
				if err := uv.UvtRecv(t, waiting, "the waiting Read"); !errors.Is(err, uv.ErrClosed) {
					t.Errorf("Read waiting while the IO closed = %v, want ErrClosed", err)
				}
				uv.UvtMust(t, s.SetReadDeadline(time.Now().Add(uv.UvtSafety)))
				n, err := s.Read(make([]byte, 1))
				if how == "abort" {
					if !errors.Is(err, syscall.ECONNRESET) {
						t.Errorf("peer's Read after Abort = %d, %v; want ECONNRESET", n, err)
					}
				} else if n != 0 || err != io.EOF {
					t.Errorf("peer's Read after Close = %d, %v; want 0, io.EOF", n, err)
				}
				v.finish(t, s)
				if after := openFDs(t); after > before {
					t.Errorf("%d descriptors open after the reactor closed, %d before the connection", after, before)
				}
				if n := uv.UvtLaneDups(); n != dups {
					t.Errorf("%d read lanes' duplicates counted after the reactor closed, %d before", n, dups)
				}
			})
		})
	}
}

// TestIOLaneDescriptorBudget: on the libuv driver a connection's read lane
// takes a duplicate of its descriptor, but the lanes' duplicates are at
// most a quarter of the process's descriptor limit; past that budget a
// connection's Reads go through the loop, and read the same bytes. (The
// pure-Go driver's lane takes none.)
func TestIOLaneDescriptorBudget(t *testing.T) {
	var lim syscall.Rlimit
	uv.UvtMust(t, syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim))
	if got, want := uv.UvtLaneDupBudgetOf(), int64(lim.Cur/4); got != want {
		t.Errorf("lane budget = %d with a limit of %d descriptors, want %d", got, lim.Cur, want)
	}
	for _, spent := range []bool{false, true} {
		t.Run(fmt.Sprintf("spent=%v", spent), func(t *testing.T) {
			conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
				if spent {
					uv.UvtLaneDupBudget(t, 0)
				}
				v := newIOEnv(t, d, "tcp4")
				c, s := v.pair(t)
				lane := 0 // a lane's duplicate: libuv's, within the budget
				if d == reactor.DriverLibuv && !spent {
					lane = 1
				}
				// The accepted end s has its lane already (AcceptIO makes
				// it), over its own socket on either driver (the libuv
				// driver leaves it unopened in libuv); the dialed end c
				// makes its own at its first Read, on the libuv driver a
				// duplicate.
				if n := duplicatedSockets(t); n != 0 {
					t.Fatalf("%d sockets open twice before any Read, want 0", n)
				}
				for i := range 5 {
					_, err := s.Write([]byte{byte(i)})
					uv.UvtMust(t, err)
					if b := readN(t, c, 1); b[0] != byte(i) {
						t.Fatalf("Read %d = %d, want %d", i, b[0], i)
					}
				}
				if got, want := duplicatedSockets(t), lane; got != want {
					t.Errorf("%d sockets open twice after the Reads, want %d", got, want)
				}
				v.finish(t, c, s)
			})
		})
	}
}

// TestIOLaneDescriptorBudgetFollowsLimit: the lanes' budget is read from
// the descriptor limit once in a while, not at every connection, yet
// follows it: a limit raised counts at once (a budget read that says no
// is read again), one lowered within 64 lanes made.
func TestIOLaneDescriptorBudgetFollowsLimit(t *testing.T) {
	var old syscall.Rlimit
	uv.UvtMust(t, syscall.Getrlimit(syscall.RLIMIT_NOFILE, &old))
	full := int64(old.Cur / 4)
	if !uv.UvtLaneDupAllowed(full) || uv.UvtLaneDupAllowed(full+1) {
		t.Fatalf("with a limit of %d descriptors: %d duplicates allowed = %v, %d = %v; want true, false",
			old.Cur, full, uv.UvtLaneDupAllowed(full), full+1, uv.UvtLaneDupAllowed(full+1))
	}
	lim := old
	uv.UvtSetRlimitCur(&lim.Cur, int(old.Cur/2))
	uv.UvtMust(t, syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim))
	defer syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old)
	for range 64 {
		uv.UvtLaneDupAllowed(1)
	}
	if half := int64(lim.Cur / 4); !uv.UvtLaneDupAllowed(half) || uv.UvtLaneDupAllowed(half+1) {
		t.Errorf("the limit lowered to %d descriptors: %d duplicates allowed = %v, %d = %v; want true, false",
			lim.Cur, half, uv.UvtLaneDupAllowed(half), half+1, uv.UvtLaneDupAllowed(half+1))
	}
	uv.UvtMust(t, syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old))
	if !uv.UvtLaneDupAllowed(full) {
		t.Errorf("the limit raised back to %d descriptors: %d duplicates refused", old.Cur, full)
	}
}

// duplicatedSockets counts the sockets this process has open under more
// than one descriptor.
func duplicatedSockets(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("cannot list descriptors: %v", err)
	}
	seen, twice := map[string]int{}, 0
	for _, e := range ents {
		if target, _ := os.Readlink("/proc/self/fd/" + e.Name()); strings.HasPrefix(target, "socket:") {
			if seen[target]++; seen[target] == 2 {
				twice++
			}
		}
	}
	return twice
}

// TestIOCloseTakesBusyWriteLane: the loop takes the write lane back at the
// end of the caller's write in flight, not in a window between a caller's
// writes, which callers writing back to back may never leave it. Close
// marks the busy lane wanted; the caller's write, ending, gives it to the
// loop (shut) instead of opening it again; the Close then returns and the
// caller's next Write meets the closed IO.
func TestIOCloseTakesBusyWriteLane(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		c, s := v.pair(t)
		if _, err := c.Write([]byte{1}); err != nil { // makes the lane
			t.Fatalf("first Write: %v", err)
		}
		uv.UvtWaitFor(t, "the write lane open", func() bool { return uv.UvtLane(c) == "open" })
		if !uv.UvtTakeLane(c) {
			t.Fatalf("write lane %s, want it taken as a caller's write takes it", uv.UvtLane(c))
		}
		closed := make(chan error, 1)
		go func() { closed <- c.Close() }()
		deadline := time.Now().Add(uv.UvtSafety)
		for uv.UvtLane(c) != "wanted" && time.Now().Before(deadline) {
			time.Sleep(100 * time.Microsecond)
		}
		if got := uv.UvtLane(c); got != "wanted" {
			uv.UvtEndLaneWrite(c, "open") // lets the Close end
			<-closed
			t.Fatalf("write lane %s with a Close waiting for the caller's write, want it marked wanted", got)
		}
		select {
		case err := <-closed:
			t.Fatalf("Close = %v with a caller's write in flight on the lane", err)
		default:
		}
		uv.UvtEndLaneWrite(c, "open")
		if err := uv.UvtRecv(t, closed, "the Close once the caller's write ended"); err != nil {
			t.Errorf("Close = %v", err)
		}
		if got := uv.UvtLane(c); got != "shut" {
			t.Errorf("write lane after the Close = %s, want shut", got)
		}
		if _, err := c.Write([]byte{2}); !errors.Is(err, uv.ErrClosed) {
			t.Errorf("Write after the Close = %v, want ErrClosed", err)
		}
		v.finish(t, s)
	})
}
