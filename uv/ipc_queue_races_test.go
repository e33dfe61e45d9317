package uv_test

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"testing"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/uv"
)

// Tests that try to break the queues for Receive and Accept of an IPC or
// Listener started with no callback: callbacks subscribed and removed
// while handles wait, Stop, Start and Close while stalled, and the other
// end gone while stalled.

// An IPC started with no callback, then given a callback, then without it
// again: what came before the callback goes to it when it subscribes, as
// what came while it was subscribed does; what came after waits for
// Receive; each handle reaches exactly one of them, none twice, none lost.
func TestIPCCallbackComesAndGoesWhileQueued(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		defer stop()
		ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
		defer cancel()
		from, to := ipcPair(t, u)
		uv.UvtMust(t, to.Start())
		a, b, err := uv.Pipe(u.Reactor)
		uv.UvtMust(t, err)
		pass := func(n int) {
			for range n {
				uv.UvtMust(t, from.SendIO(ctx, a))
			}
		}
		pass(3)
		uv.UvtWaitFor(t, "three handles queued", func() bool { return uv.UvtIPCQueued(to) == 3 })
		var mu sync.Mutex
		var toCallback []*uv.IO
		cb := event.NewCallback(func(_ event.Event, res any, err error) {
			if c, ok := res.(*uv.IO); ok {
				mu.Lock()
				toCallback = append(toCallback, c)
				mu.Unlock()
			}
		})
		uv.UvtMust(t, u.Call(func() { uv.UvtMust(t, to.AddCallback(cb)) }))
		pass(4)
		uv.UvtWaitFor(t, "seven handles to the callback", func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(toCallback) == 7
		})
		if n := uv.UvtIPCQueued(to); n != 0 {
			t.Errorf("%d handles left queued with a callback subscribed, want 0", n)
		}
		uv.UvtMust(t, u.Call(func() { uv.UvtMust(t, to.DelCallback(cb)) }))
		pass(2)
		uv.UvtWaitFor(t, "two handles queued", func() bool { return uv.UvtIPCQueued(to) == 2 })
		seen := map[*uv.IO]string{}
		for _, c := range toCallback {
			seen[c] = "callback"
		}
		for i := range 2 {
			got, err := to.Receive(ctx)
			if err != nil || got.IO == nil {
				t.Fatalf("Receive %d = %+v, %v", i, got, err)
			}
			if who, dup := seen[got.IO]; dup {
				t.Errorf("Receive %d got a handle the %s had", i, who)
			}
			seen[got.IO] = "Receive"
		}
		if len(seen) != 9 {
			t.Errorf("%d distinct handles, want 9", len(seen))
		}
		for c := range seen {
			c.Close()
		}
		for _, x := range []interface{ Close() error }{a, b, from, to} {
			uv.UvtMust(t, x.Close())
		}
		stop()
		uv.UvtShutdown(t, u, false)
	})
}

// Stalled (its queue full, nobody receiving), an IPC stopped and started
// again stays stalled; the first Receive, made while it is stopped,
// takes from the full queue; the other end then closed, every handle it passed is
// received, then io.EOF, once, and again for the next Receive; nothing
// leaks.
func TestIPCStalledThenStoppedStartedAndPeerGone(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		defer stop()
		ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
		defer cancel()
		from, to := ipcPair(t, u)
		uv.UvtMust(t, to.Start())
		a, b, err := uv.Pipe(u.Reactor)
		uv.UvtMust(t, err)
		passes := 2*uv.UvtIPCQueueLimit + 10
		sent := make(chan int, 1)
		go func() {
			n := 0
			for range passes {
				if from.SendIO(ctx, a) != nil {
					break
				}
				n++
			}
			sent <- n
		}()
		uv.UvtWaitFor(t, "the IPC's queue to fill", func() bool { return uv.UvtIPCStalled(to) })
		uv.UvtMust(t, to.Stop())
		uv.UvtMust(t, to.Start())
		if !uv.UvtIPCStalled(to) {
			t.Errorf("Stop and Start ended the stall with the queue full")
		}
		uv.UvtMust(t, to.Stop())
		got, err := to.Receive(ctx)
		if err != nil || got.IO == nil {
			t.Fatalf("Receive while stopped = %+v, %v", got, err)
		}
		got.Close()
		received := 1
		uv.UvtMust(t, to.Start())
		// Receive the rest while the sender goes on; then the sender's
		// end goes away.
		for received < passes {
			got, err := to.Receive(ctx)
			if err != nil || got.IO == nil {
				t.Fatalf("Receive %d = %+v, %v", received, got, err)
			}
			got.Close()
			received++
		}
		if n := uv.UvtRecv(t, sent, "the passes"); n != passes {
			t.Errorf("%d passes of %d went out", n, passes)
		}
		uv.UvtMust(t, from.Close())
		for i := range 2 {
			if got, err := to.Receive(ctx); !errors.Is(err, io.EOF) {
				t.Errorf("Receive %d after the other end closed = %+v, %v; want io.EOF", i, got, err)
			}
		}
		for _, x := range []interface{ Close() error }{a, b, to} {
			uv.UvtMust(t, x.Close())
		}
		stop()
		uv.UvtShutdown(t, u, false)
	})
}

// The other end closes while the IPC is stalled with passes waiting in
// the socket: every handle the sender's kernel took is still received,
// then io.EOF; the receivers' queue is not a place where handles are
// lost.
func TestIPCPeerGoneWhileStalled(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		defer stop()
		ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
		defer cancel()
		from, to := ipcPair(t, u)
		uv.UvtMust(t, to.Start())
		a, b, err := uv.Pipe(u.Reactor)
		uv.UvtMust(t, err)
		n := uv.UvtIPCQueueLimit + 5
		for range n { // the socket holds what the queue does not
			uv.UvtMust(t, from.SendIO(ctx, a))
		}
		uv.UvtWaitFor(t, "the IPC's queue to fill", func() bool { return uv.UvtIPCStalled(to) })
		uv.UvtMust(t, from.Close())
		for i := range n {
			got, err := to.Receive(ctx)
			if err != nil || got.IO == nil {
				t.Fatalf("Receive %d of %d = %+v, %v; %s", i, n, got, err, to.Info())
			}
			got.Close()
		}
		if got, err := to.Receive(ctx); !errors.Is(err, io.EOF) {
			t.Errorf("Receive after the last = %+v, %v; want io.EOF", got, err)
		}
		for _, x := range []interface{ Close() error }{a, b, to} {
			uv.UvtMust(t, x.Close())
		}
		stop()
		uv.UvtShutdown(t, u, false)
	})
}

// Receives cancelled while the IPC is stalled take nothing: the handles
// stay queued, and the next Receives get them all, in order of arrival
// (each a distinct handle).
func TestIPCReceiveCancelledWhileStalled(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		defer stop()
		ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
		defer cancel()
		from, to := ipcPair(t, u)
		uv.UvtMust(t, to.Start())
		a, b, err := uv.Pipe(u.Reactor)
		uv.UvtMust(t, err)
		n := uv.UvtIPCQueueLimit
		for range n {
			uv.UvtMust(t, from.SendIO(ctx, a))
		}
		uv.UvtWaitFor(t, "the IPC's queue to fill", func() bool { return uv.UvtIPCStalled(to) })
		queued := uv.UvtIPCQueued(to)
		done, cancelDone := context.WithCancel(context.Background())
		cancelDone()
		// A Receive with its context already done still takes a queued
		// handle, as a queued result is there at once; none is lost.
		seen := map[*uv.IO]bool{}
		got, err := to.Receive(done)
		switch {
		case err == nil && got.IO != nil:
			seen[got.IO] = true
		case errors.Is(err, context.Canceled):
		default:
			t.Fatalf("Receive with a done context = %+v, %v", got, err)
		}
		for len(seen) < n {
			got, err := to.Receive(ctx)
			if err != nil || got.IO == nil {
				t.Fatalf("Receive = %+v, %v", got, err)
			}
			if seen[got.IO] {
				t.Fatalf("a handle received twice")
			}
			seen[got.IO] = true
		}
		if queued != n {
			t.Errorf("%d queued when stalled, want %d", queued, n)
		}
		for c := range seen {
			c.Close()
		}
		for _, x := range []interface{ Close() error }{a, b, from, to} {
			uv.UvtMust(t, x.Close())
		}
		stop()
		uv.UvtShutdown(t, u, false)
	})
}

// A Listener started with no callback, then given one, then without it:
// connections that came before go to the callback when it subscribes, as
// those while it was there do; those after wait for Accept; each one
// reaches exactly one of them.
func TestListenerCallbackComesAndGoesWhileQueued(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		defer stop()
		ln, err := uv.Listen(u.Reactor, "tcp4", "127.0.0.1:0")
		uv.UvtMust(t, err)
		uv.UvtMust(t, ln.Start())
		var clients []net.Conn
		dial := func(n int) {
			for range n {
				c, err := net.Dial("tcp4", ln.Addr().String())
				uv.UvtMust(t, err)
				clients = append(clients, c)
			}
		}
		defer func() {
			for _, c := range clients {
				c.Close()
			}
		}()
		dial(3)
		uv.UvtWaitFor(t, "three connections queued", func() bool { return uv.UvtAcceptsQueued(ln) == 3 })
		var mu sync.Mutex
		var toCallback []*uv.IO
		cb := event.NewCallback(func(_ event.Event, res any, err error) {
			if c, ok := res.(*uv.IO); ok {
				mu.Lock()
				toCallback = append(toCallback, c)
				mu.Unlock()
			}
		})
		uv.UvtMust(t, u.Call(func() { uv.UvtMust(t, ln.AddCallback(cb)) }))
		dial(4)
		uv.UvtWaitFor(t, "seven connections to the callback", func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(toCallback) == 7
		})
		if n := uv.UvtAcceptsQueued(ln); n != 0 {
			t.Errorf("%d connections left queued with a callback subscribed, want 0", n)
		}
		uv.UvtMust(t, u.Call(func() { uv.UvtMust(t, ln.DelCallback(cb)) }))
		dial(2)
		uv.UvtWaitFor(t, "two connections queued", func() bool { return uv.UvtAcceptsQueued(ln) == 2 })
		seen := map[*uv.IO]bool{}
		for _, c := range toCallback {
			seen[c] = true
		}
		ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
		defer cancel()
		for i := range 2 {
			c, err := ln.AcceptIO(ctx)
			uv.UvtMust(t, err)
			if seen[c] {
				t.Errorf("Accept %d got a connection the callback had", i)
			}
			seen[c] = true
		}
		if len(seen) != 9 {
			t.Errorf("%d distinct connections, want 9", len(seen))
		}
		for c := range seen {
			c.Close()
		}
		uv.UvtMust(t, ln.Close())
		stop()
		uv.UvtShutdown(t, u, false)
	})
}

// Handles the other end passed before it closed the pipe are all
// received before io.EOF, however many wait in the socket when the
// receiver starts reading: the end of the pipe is not where reading
// stops while handles remain. (libuv reports its end on the hang-up
// after any read shorter than its buffer, and each read of an IPC pipe
// is one handle's byte: it told io.EOF after the first handle.)
func TestIPCHandlesBeforePeerCloseAllReceived(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		defer stop()
		ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
		defer cancel()
		from, to := ipcPair(t, u)
		a, b, err := uv.Pipe(u.Reactor)
		uv.UvtMust(t, err)
		const n = 5
		for range n { // to is not started: they wait in the socket
			uv.UvtMust(t, from.SendIO(ctx, a))
		}
		uv.UvtMust(t, from.Close())
		for i := range n {
			got, err := to.Receive(ctx)
			if err != nil || got.IO == nil {
				t.Fatalf("Receive %d of %d = %+v, %v; %s", i, n, got, err, to.Info())
			}
			got.Close()
		}
		if got, err := to.Receive(ctx); !errors.Is(err, io.EOF) {
			t.Errorf("Receive after the last = %+v, %v; want io.EOF", got, err)
		}
		for _, x := range []interface{ Close() error }{a, b, to} {
			uv.UvtMust(t, x.Close())
		}
		stop()
		uv.UvtShutdown(t, u, false)
	})
}
