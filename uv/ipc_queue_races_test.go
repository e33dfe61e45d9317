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
		callbackComesAndGoes(t, u, takeQueue{
			what: "handles",
			sub:  to,
			feed: func(n int) {
				for range n {
					uv.UvtMust(t, from.SendIO(ctx, a))
				}
			},
			queued: func() int { return uv.UvtIPCQueued(to) },
			take: func(ctx context.Context) (*uv.IO, error) {
				got, err := to.Receive(ctx)
				if err == nil && got.IO == nil {
					err = errors.New("no handle received")
				}
				return got.IO, err
			},
		})
		for _, x := range []interface{ Close() error }{a, b, from, to} {
			uv.UvtMust(t, x.Close())
		}
		stop()
		uv.UvtShutdown(t, u, false)
	})
}

// takeQueue is what callbackComesAndGoes drives: an IPC's queue for
// Receive or a Listener's for Accept.
type takeQueue struct {
	what string // what it queues, plural: "handles", "connections"
	sub  interface {
		AddCallback(*event.Callback) error
		DelCallback(*event.Callback) error
	}
	feed   func(n int)                           // makes n more arrive
	queued func() int                            // how many wait in the queue
	take   func(context.Context) (*uv.IO, error) // Receive or Accept
}

// callbackComesAndGoes feeds q 3 with no callback, 4 with one subscribed
// (the 3 queued go to it too), 2 once it is gone (they wait to be taken),
// and checks that each of the 9 reached exactly one taker, then closes
// them.
func callbackComesAndGoes(t *testing.T, u *uv.UvtReactor, q takeQueue) {
	t.Helper()
	q.feed(3)
	uv.UvtWaitFor(t, "three "+q.what+" queued", func() bool { return q.queued() == 3 })
	var mu sync.Mutex
	var toCallback []*uv.IO
	cb := event.NewCallback(func(_ event.Event, res any, err error) {
		if c, ok := res.(*uv.IO); ok {
			mu.Lock()
			toCallback = append(toCallback, c)
			mu.Unlock()
		}
	})
	uv.UvtMust(t, u.Call(func() { uv.UvtMust(t, q.sub.AddCallback(cb)) }))
	q.feed(4)
	uv.UvtWaitFor(t, "seven "+q.what+" to the callback", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(toCallback) == 7
	})
	if n := q.queued(); n != 0 {
		t.Errorf("%d %s left queued with a callback subscribed, want 0", n, q.what)
	}
	uv.UvtMust(t, u.Call(func() { uv.UvtMust(t, q.sub.DelCallback(cb)) }))
	q.feed(2)
	uv.UvtWaitFor(t, "two "+q.what+" queued", func() bool { return q.queued() == 2 })
	seen := map[*uv.IO]bool{}
	for _, c := range toCallback {
		seen[c] = true
	}
	ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
	defer cancel()
	for i := range 2 {
		c, err := q.take(ctx)
		if err != nil {
			t.Fatalf("take %d = %v", i, err)
		}
		if seen[c] {
			t.Errorf("take %d got one of the %s the callback had", i, q.what)
		}
		seen[c] = true
	}
	if len(seen) != 9 {
		t.Errorf("%d distinct %s, want 9", len(seen), q.what)
	}
	for c := range seen {
		c.Close()
	}
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
		defer func() {
			for _, c := range clients {
				c.Close()
			}
		}()
		callbackComesAndGoes(t, u, takeQueue{
			what: "connections",
			sub:  ln,
			feed: func(n int) {
				for range n {
					c, err := net.Dial("tcp4", ln.Addr().String())
					uv.UvtMust(t, err)
					clients = append(clients, c)
				}
			},
			queued: func() int { return uv.UvtAcceptsQueued(ln) },
			take:   ln.AcceptIO,
		})
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
