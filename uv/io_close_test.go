package uv_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"syscall"
	"testing"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/uv"
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
