package uv_test

import (
	"context"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/eventkind"
	"github.com/uvevent/uvevent/uv"
)

// dialN connects n plain clients to ln; the kernel completes them whether
// or not the listener accepts.
func dialN(t *testing.T, ln *uv.Listener, n int) []net.Conn {
	t.Helper()
	var cs []net.Conn
	for range n {
		c, err := net.Dial("tcp4", ln.Addr().String())
		uv.UvtMust(t, err)
		t.Cleanup(func() { c.Close() })
		cs = append(cs, c)
	}
	return cs
}

// TestListenerStopInCallback: connections waiting together; the
// callback that stops the listener on the first gets no other in that
// pass; the rest wait in the kernel's queue while stopped and come with
// the next Start. Stopped, with connections queued, the listener closes
// cleanly (the clients read the end of the stream).
func TestListenerStopInCallback(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		var got []*uv.IO // loop-owned
		first := make(chan struct{})
		_, err := event.Subscribe(v.ln, func(ev event.Event, res any, err error) {
			if c, ok := res.(*uv.IO); ok {
				got = append(got, c)
			}
			if len(got) == 1 && err == nil {
				uv.UvtMust(t, ev.Stop())
				close(first)
			}
		})
		uv.UvtMust(t, err)
		dialN(t, v.ln, 5) // all wait before the listener starts
		uv.UvtMust(t, v.ln.Start())
		uv.UvtRecv(t, first, "the first connection")
		dialN(t, v.ln, 2) // while stopped
		var n int
		uv.UvtMust(t, v.u.Call(func() { n = len(got) }))
		if n != 1 {
			t.Fatalf("%d connections accepted once stopped in the first callback, want 1", n)
		}
		uv.UvtMust(t, v.u.Call(func() {
			uv.UvtMust(t, v.ln.Start()) // the callback stops it again at once: len(got) > 1 now
		}))
		uv.UvtWaitFor(t, "the waiting connections", func() bool {
			v.u.Call(func() {
				n = len(got)
				if n < 7 && eventkind.LoopRefs(v.ln) == 0 {
					v.ln.Start()
				}
			})
			return n == 7
		})
		// Stopped again, with more waiting: Close drops them.
		uv.UvtMust(t, v.ln.Stop())
		late := dialN(t, v.ln, 2)
		uv.UvtMust(t, v.ln.Close())
		for _, c := range late {
			if n, err := c.Read(make([]byte, 1)); n != 0 || err == nil {
				t.Errorf("a client queued at the listener's Close read %d, %v; want its end", n, err)
			}
		}
		var closers []interface{ Close() error }
		uv.UvtMust(t, v.u.Call(func() {
			for _, c := range got {
				closers = append(closers, c)
			}
		}))
		v.finish(t, closers...)
	})
}

// TestListenerAcceptCancelled: an Accept whose context is cancelled, before
// or while it waits, returns the context's error and takes no connection:
// the next Accept gets the one that comes.
func TestListenerAcceptCancelled(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := v.ln.AcceptIO(ctx); !errors.Is(err, context.Canceled) {
			t.Errorf("AcceptIO with a cancelled context = %v, want context.Canceled", err)
		}
		ctx, cancel = context.WithCancel(context.Background())
		errs := make(chan error, 1)
		go func() {
			_, err := v.ln.AcceptIO(ctx)
			errs <- err
		}()
		uv.UvtWaitFor(t, "the Accept to start the listener", func() bool { return eventkind.LoopRefs(v.ln) > 0 })
		cancel()
		if err := uv.UvtRecv(t, errs, "the cancelled Accept"); err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("AcceptIO cancelled while waiting = %v, want context.Canceled", err)
		}
		clients := dialN(t, v.ln, 1)
		c, err := v.ln.AcceptIO(context.Background())
		uv.UvtMust(t, err)
		if _, err := clients[0].Write([]byte("k")); err != nil {
			t.Fatal(err)
		}
		if n, err := c.Read(make([]byte, 1)); n != 1 || err != nil {
			t.Errorf("Read on the connection accepted after the cancels = %d, %v", n, err)
		}
		v.finish(t, c)
	})
}

// TestListenerChurn: Stop and Start over and over from another
// goroutine while clients connect: every connection is accepted once,
// none dropped (each client reads the byte its server end writes).
func TestListenerChurn(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		const n = 200
		accepted := 0 // loop-owned
		_, err := event.Subscribe(v.ln, func(_ event.Event, res any, err error) {
			if c, ok := res.(*uv.IO); ok {
				accepted++
				c.Send([]byte{1})
				c.CloseWrite()
			}
		})
		uv.UvtMust(t, err)
		uv.UvtMust(t, v.ln.Start())
		done := make(chan error, 1)
		go func() {
			for range n {
				c, err := net.Dial("tcp4", v.ln.Addr().String())
				if err != nil {
					done <- err
					return
				}
				c.SetReadDeadline(time.Now().Add(uv.UvtSafety)) // a hang fails instead
				b := make([]byte, 2)
				k, _ := io.ReadFull(c, b[:1])
				c.Close()
				if k != 1 {
					done <- errors.New("a client was dropped: it read no byte")
					return
				}
			}
			done <- nil
		}()
		for churning := true; churning; {
			select {
			case err := <-done:
				uv.UvtMust(t, err)
				churning = false
			default:
				uv.UvtMust(t, v.ln.Stop())
				uv.UvtMust(t, v.ln.Start())
			}
		}
		uv.UvtMust(t, v.u.Call(func() {
			if accepted != n {
				t.Errorf("%d connections accepted, want %d", accepted, n)
			}
		}))
		v.finish(t)
	})
}
