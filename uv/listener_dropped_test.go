package uv_test

import (
	"context"
	"errors"
	"net"
	"runtime"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// A reactor dropped without Close while it holds a listener that has
// accepted (on the libuv driver the shim then keeps a spare handle for the
// next connection) is collected, and frees the listener's socket: the
// descriptor count comes back, and nothing listens on the old address any
// more. Half the listeners are stopped and dropped; the other half are
// closed by their callback while a second connection accepted in the same
// turn is still to be handed over (on the libuv driver, a record whose
// connection nobody took, released by the loop of the dropped reactor).
//
// The listeners are stopped or closed before the drop: a reactor with a
// started event is not collected (see TestReactorDroppedWithAStartedHandle).
func TestReactorDroppedWithAListener(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		var addrs []string
		collectDropped(t, 10, func(i int32, collected *atomic.Int32) {
			addrs = append(addrs, dropListeningReactor(t, d, i%2 == 1, collected))
		})
		for _, a := range addrs {
			c, err := net.Dial("tcp4", a)
			if err == nil {
				c.Close()
				t.Errorf("dial %s after the reactor was collected: connected, want ECONNREFUSED", a)
			} else if !errors.Is(err, syscall.ECONNREFUSED) {
				t.Errorf("dial %s after the reactor was collected: %v, want ECONNREFUSED", a, err)
			}
		}
	})
}

// dropListeningReactor makes a reactor whose listener accepts a connection
// (two waiting, if closeInCallback: the callback closes the listener at the
// first), stops it, and drops both; it returns the listener's address.
func dropListeningReactor(t *testing.T, d reactor.Driver, closeInCallback bool, collected *atomic.Int32) string {
	t.Helper()
	r, err := reactor.New(reactor.Options{Driver: d}) // dropped, not closed: no helper may hold it
	uv.UvtMust(t, err)
	runtime.AddCleanup(r, func(c *atomic.Int32) { c.Add(1) }, collected)
	ln, err := uv.Listen(r, "tcp4", "127.0.0.1:0")
	uv.UvtMust(t, err)
	addr := ln.Addr().String()
	accepted := 0
	_, err = event.Subscribe(ln, func(ev event.Event, res any, err error) {
		if c, ok := res.(*uv.IO); ok && err == nil {
			accepted++
			c.Close()
			if closeInCallback {
				ev.Close()
			}
		}
	})
	uv.UvtMust(t, err)
	uv.UvtMust(t, ln.Start())
	dials := 1
	if closeInCallback {
		dials = 2
	}
	for range dials {
		c, err := net.Dial("tcp4", addr) // connected once in the backlog
		uv.UvtMust(t, err)
		defer c.Close()
	}
	turnUntil(t, r, func() bool { return accepted > 0 })
	if !closeInCallback {
		uv.UvtMust(t, ln.Stop())
	}
	return addr
}

// turnUntil turns r until cond holds. It takes the reactor itself, not a
// test helper that would hold it, so that the reactor may be collected once
// the caller drops it.
func turnUntil(t *testing.T, r *reactor.Reactor, cond func() bool) {
	t.Helper()
	for !cond() {
		ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
		err := r.RunOnce(ctx)
		cancel()
		uv.UvtMust(t, err)
	}
}

// TestReactorDroppedWithAnOnAcceptCallback: a reactor dropped with a
// stopped listener whose callback was added with OnAccept (event.On) is
// collected as one with a Subscribe callback is: On's callback does not
// hold the listener, and still delivers the accepted connection (the
// listener's notifications name the driver's event behind it, not the
// listener).
func TestReactorDroppedWithAnOnAcceptCallback(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		collectDropped(t, 4, func(_ int32, collected *atomic.Int32) {
			r, err := reactor.New(reactor.Options{Driver: d}) // dropped, not closed: no helper may hold it
			uv.UvtMust(t, err)
			runtime.AddCleanup(r, func(c *atomic.Int32) { c.Add(1) }, collected)
			ln, err := uv.Listen(r, "tcp4", "127.0.0.1:0")
			uv.UvtMust(t, err)
			accepted := 0
			_, err = ln.OnAccept(func(c *uv.IO, err error) {
				if err == nil {
					if c == nil {
						t.Error("OnAccept delivered no connection")
					} else {
						c.Close()
					}
					accepted++
				}
			})
			uv.UvtMust(t, err)
			uv.UvtMust(t, ln.Start())
			c, err := net.Dial("tcp4", ln.Addr().String())
			uv.UvtMust(t, err)
			defer c.Close()
			turnUntil(t, r, func() bool { return accepted > 0 })
			uv.UvtMust(t, ln.Stop())
		})
	})
}
