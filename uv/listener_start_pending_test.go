package uv_test

import (
	"context"
	"net"
	"sync/atomic"
	"testing"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/uv"
)

// The tests of this file start, from a callback, listeners that have a
// connection waiting, in a turn of many records: every record of the turn
// is dispatched once, a read kept from it stays intact, and each listener
// gets its connection. (A listener's Start on the libuv driver once took
// its connection at once, pushing a record while the turn's records were
// being dispatched, which must not move them from under the dispatch; it
// now watches its socket, and the connection comes on a later turn.)

// pendingListeners are listeners, not started, each with a connection in
// its backlog, whose callbacks count and close the connections accepted.
type pendingListeners struct {
	lns      []*uv.Listener
	peers    []net.Conn
	accepted atomic.Int32
}

// newPendingListeners makes n of them on u, which must be served.
func newPendingListeners(t *testing.T, u *uv.UvtReactor, n int) *pendingListeners {
	t.Helper()
	pl := &pendingListeners{}
	for range n {
		ln, err := uv.Listen(u.Reactor, "tcp4", "127.0.0.1:0")
		uv.UvtMust(t, err)
		event.Subscribe(ln, func(_ event.Event, res any, err error) {
			if c, ok := res.(*uv.IO); ok && err == nil {
				pl.accepted.Add(1)
				c.Close()
			}
		})
		pl.lns = append(pl.lns, ln)
		c, err := net.Dial("tcp4", ln.Addr().String()) // in the backlog once Dial returns
		uv.UvtMust(t, err)
		pl.peers = append(pl.peers, c)
	}
	return pl
}

// start starts them all; on the loop.
func (pl *pendingListeners) start(t *testing.T) {
	for _, ln := range pl.lns {
		uv.UvtMust(t, ln.Start())
	}
}

// finish waits, served, for every connection to be accepted, and closes
// the listeners and their peers.
func (pl *pendingListeners) finish(t *testing.T) {
	t.Helper()
	uv.UvtWaitFor(t, "every listener's connection", func() bool { return int(pl.accepted.Load()) == len(pl.lns) })
	for i, ln := range pl.lns {
		ln.Close()
		pl.peers[i].Close()
	}
}

// newTriggers makes n started triggers on u (served), each counting its
// notifications in fired[i] and then calling then.
func newTriggers(t *testing.T, u *uv.UvtReactor, n int, then func()) (trs []*uv.Trigger, fired []int) {
	t.Helper()
	fired = make([]int, n)
	for i := range n {
		tr, err := uv.NewTrigger(u.Reactor)
		uv.UvtMust(t, err)
		event.Subscribe(tr, func(_ event.Event, _ any, err error) {
			if err == nil {
				fired[i]++
				then()
			}
		})
		uv.UvtMust(t, tr.Start())
		trs = append(trs, tr)
	}
	return trs, fired
}

// sendAll sends every trigger with the loop held: one turn sees them all.
func sendAll(t *testing.T, u *uv.UvtReactor, trs []*uv.Trigger) {
	u.Call(func() {
		for _, tr := range trs {
			uv.UvtMust(t, tr.Send())
		}
	})
}

// TestListenerStartedByEarlierRecord: a turn delivers many records, and
// the callback of the first one dispatched starts the listeners. Every
// trigger of the turn fires once, and every listener gets its connection.
func TestListenerStartedByEarlierRecord(t *testing.T) {
	const nTriggers, nListeners = 60, 8
	eachDriverCounted(t, func(t *testing.T, u *uv.UvtReactor, base, fds int) {
		stop := uv.UvtServe(t, u)
		pl := newPendingListeners(t, u, nListeners)
		started := false
		trs, fired := newTriggers(t, u, nTriggers, func() {
			if !started {
				started = true
				pl.start(t)
			}
		})
		stop()
		// A turn sees each listener's connection waiting: stopped, it
		// leaves it pending.
		uv.UvtMust(t, u.RunNoWait(context.Background()))
		sendAll(t, u, trs)
		uv.UvtMust(t, u.RunOnce(context.Background()))
		for i, n := range fired {
			if n != 1 {
				t.Errorf("trigger %d fired %d times in the turn, want 1", i, n)
			}
		}
		stop = uv.UvtServe(t, u)
		pl.finish(t)
		for _, tr := range trs {
			tr.Close()
		}
		stop()
		uv.UvtShutdown(t, u, false)
		uv.UvtNoLeaks(t, base, fds)
	})
}

// TestIOKeepsReadTakenAfterQueueMoved: a read brings more bytes than the
// parked ReadAsync takes, and that request's callback starts the
// listeners, in a turn of many records. The IO then keeps the rest of the
// read: its buffer is the IO's, which the turn's release must not give
// back (the next reads would land in it). The kept bytes are read intact
// after more reads came.
func TestIOKeepsReadTakenAfterQueueMoved(t *testing.T) {
	const nTriggers, nListeners = 60, 8
	eachDriverCounted(t, func(t *testing.T, u *uv.UvtReactor, base, fds int) {
		stop := uv.UvtServe(t, u)
		ln, err := uv.Listen(u.Reactor, "tcp4", "127.0.0.1:0")
		uv.UvtMust(t, err)
		peer, err := net.Dial("tcp4", ln.Addr().String())
		uv.UvtMust(t, err)
		ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
		defer cancel()
		server, err := ln.AcceptIO(ctx)
		uv.UvtMust(t, err)
		pl := newPendingListeners(t, u, nListeners)
		trs, _ := newTriggers(t, u, nTriggers, func() {})
		first, err := server.ReadAsync(1)
		uv.UvtMust(t, err)
		event.Subscribe(first, func(_ event.Event, _ any, err error) {
			if err == nil {
				pl.start(t)
			}
		})
		stop()
		uv.UvtMust(t, u.RunNoWait(context.Background()))
		sendAll(t, u, trs)
		_, err = peer.Write([]byte("abcdef"))
		uv.UvtMust(t, err)
		uv.UvtTurnUntil(t, u, "the first read", func() bool { _, ok, _ := first.Outcome(); return ok })
		if p, _, err := first.Outcome(); string(p) != "a" || err != nil {
			t.Fatalf("the first read = %q, %v; want \"a\", nil", p, err)
		}
		// One more read, into a buffer of the pool, while the rest is kept.
		_, err = peer.Write([]byte("XXXXXX"))
		uv.UvtMust(t, err)
		uv.UvtTurnUntil(t, u, "the next read kept", func() bool { n, _ := uv.UvtKept(server); return n == 2 })
		got := make(chan string, 4)
		event.Subscribe(server, func(_ event.Event, res any, err error) {
			if p, ok := readOf(res); ok && err == nil {
				got <- string(p)
			}
		})
		stop = uv.UvtServe(t, u)
		uv.UvtMust(t, server.Start())
		for _, want := range []string{"bcdef", "XXXXXX"} {
			if s := uv.UvtRecv(t, got, "the bytes kept"); s != want {
				t.Errorf("the bytes kept = %q, want %q", s, want)
			}
		}
		pl.finish(t)
		for _, tr := range trs {
			tr.Close()
		}
		server.Close()
		peer.Close()
		ln.Close()
		stop()
		uv.UvtShutdown(t, u, false)
		uv.UvtNoLeaks(t, base, fds)
	})
}
