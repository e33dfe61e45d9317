package uv_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/eventkind"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// heldConnect returns the address of a listening socket whose queue is
// full (one connection, first, waits in it, never accepted): a connect to
// it stays in flight, the kernel dropping its SYNs until the queue has
// room. lfd is the socket, for the test to accept from.
func heldConnect(t *testing.T) (addr string, lfd int, first net.Conn) {
	t.Helper()
	lfd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
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
