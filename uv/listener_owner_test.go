package uv_test

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"testing"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// dialWriting dials ln n times from goroutines, each client writing its
// index as one byte, and returns the clients once all are connected.
func dialWriting(t *testing.T, ctx context.Context, ln *uv.Listener, n int) []net.Conn {
	t.Helper()
	cs := make([]net.Conn, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var dl net.Dialer
			c, err := dl.DialContext(ctx, "tcp4", ln.Addr().String())
			if err != nil {
				t.Errorf("client %d: %v", i, err)
				return
			}
			if _, err := c.Write([]byte{byte(i)}); err != nil {
				t.Errorf("client %d: %v", i, err)
			}
			cs[i] = c
		}()
	}
	wg.Wait()
	return cs
}

// readIndexes reads each connection's first size bytes, closes it, and
// fails the test unless the last of them are 0..n-1, each once.
func readIndexes(t *testing.T, got []*uv.IO, n, size int) {
	t.Helper()
	seen := make(map[byte]int)
	for _, s := range got {
		b := make([]byte, size)
		if _, err := io.ReadFull(s, b); err != nil {
			t.Errorf("a connection: %v", err)
		}
		seen[b[size-1]]++
		s.Close()
	}
	for i := range n {
		if seen[byte(i)] != 1 {
			t.Errorf("client %d's connection received %d times, want once", i, seen[byte(i)])
		}
	}
	if len(got) != n {
		t.Errorf("%d connections received for %d clients", len(got), n)
	}
}

// TestListenerCallbackTakesTheQueue: a listener started with no callback
// queues what it accepts for Accept, up to its backlog, and then stops
// accepting (stalled). A callback that subscribes then gets the queued
// connections and every one after them: the listener accepts again, none
// waits for an Accept that nobody will make, none is lost, none handed
// twice. On either driver.
func TestListenerCallbackTakesTheQueue(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		const backlog, clients = 2, 8
		u, stop, ln := listenBacklog(t, d, backlog)
		ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
		defer cancel()
		uv.UvtMust(t, ln.Start())
		var cs []net.Conn
		dialed := make(chan struct{})
		go func() {
			defer close(dialed)
			cs = dialWriting(t, ctx, ln, clients)
		}()
		uv.UvtWaitFor(t, "the listener to stall on its full queue", func() bool {
			return uv.UvtAcceptStalled(ln)
		})
		got := make(chan *uv.IO, 2*clients)
		_, err := event.Subscribe(ln, func(_ event.Event, res any, err error) {
			if s, ok := res.(*uv.IO); ok {
				got <- s
			} else if err != nil && !errors.Is(err, event.ErrClosed) {
				t.Errorf("listener callback: %v", err)
			}
		})
		uv.UvtMust(t, err)
		var ios []*uv.IO
		for len(ios) < clients {
			ios = append(ios, uv.UvtRecv(t, got, "the connections for the callback"))
		}
		<-dialed
		readIndexes(t, ios, clients, 1)
		if n := uv.UvtAcceptsQueued(ln); n != 0 {
			t.Errorf("%d connections left queued for Accept", n)
		}
		for _, c := range cs {
			if c != nil {
				c.Close()
			}
		}
		uv.UvtMust(t, ln.Close())
		stop()
		uv.UvtShutdown(t, u, false)
	})
}

// TestListenerCallbackAndAcceptOneOwner: a listener with a callback and
// Accepts at once gives each connection to one of them, never to both: a
// waiting Accept first, else the callbacks. On either driver.
func TestListenerCallbackAndAcceptOneOwner(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		const clients = 12
		u, stop, ln := listenBacklog(t, d, 64)
		ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
		defer cancel()
		got := make(chan *uv.IO, 4*clients)
		_, err := event.Subscribe(ln, func(_ event.Event, res any, _ error) {
			if s, ok := res.(*uv.IO); ok {
				got <- s
			}
		})
		uv.UvtMust(t, err)
		uv.UvtMust(t, ln.Start())
		accepting := make(chan struct{})
		go func() {
			defer close(accepting)
			for {
				s, err := ln.AcceptIO(ctx)
				if err != nil {
					return // the listener's Close
				}
				got <- s
			}
		}()
		var cs []net.Conn
		for i := range clients {
			// One at a time: each one comes while an Accept waits, or
			// while it hands the last one over.
			c := dialWriting(t, ctx, ln, 1)[0]
			c.Write([]byte{byte(i)})
			cs = append(cs, c)
		}
		var ios []*uv.IO
		seen := make(map[*uv.IO]bool)
		for len(ios) < clients {
			s := uv.UvtRecv(t, got, "a connection")
			if seen[s] {
				t.Fatalf("a connection handed to both the callback and Accept")
			}
			seen[s] = true
			ios = append(ios, s)
		}
		uv.UvtMust(t, ln.Close())
		<-accepting
		close(got)
		for s := range got {
			t.Errorf("a connection handed out after every client's: twice (%v)", seen[s])
		}
		// Each client wrote 0 then its index: the second byte of every
		// connection tells whose it is.
		readIndexes(t, ios, clients, 2)
		for _, c := range cs {
			c.Close()
		}
		stop()
		uv.UvtShutdown(t, u, false)
	})
}

// TestListenerCallbackGetsAcceptsLane: a connection queued for Accept,
// whose read lane's making waits for the Accept that takes it, and which a
// callback that subscribes gets instead, has its read lane made by the
// loop at its first blocking Read, as a callback's connection has: its
// next Reads go to the socket from the caller's goroutine. On either
// driver.
func TestListenerCallbackGetsAcceptsLane(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		u, stop, ln := listenBacklog(t, d, 4)
		uv.UvtMust(t, ln.Start())
		p, err := net.Dial("tcp4", ln.Addr().String())
		uv.UvtMust(t, err)
		defer p.Close()
		_, err = p.Write([]byte{1, 2})
		uv.UvtMust(t, err)
		uv.UvtWaitFor(t, "the connection queued for Accept", func() bool { return uv.UvtAcceptsQueued(ln) == 1 })
		got := make(chan *uv.IO, 1)
		_, err = event.Subscribe(ln, func(_ event.Event, res any, err error) {
			if s, ok := res.(*uv.IO); ok {
				got <- s
			}
		})
		uv.UvtMust(t, err)
		s := uv.UvtRecv(t, got, "the queued connection, for the callback")
		if b := readN(t, s, 1); b[0] != 1 {
			t.Errorf("first Read: %v, want [1]", b)
		}
		if l := uv.UvtReadLane(s); l == "none" {
			t.Errorf("no read lane after the connection's first blocking Read")
		}
		if b := readN(t, s, 1); b[0] != 2 {
			t.Errorf("second Read: %v, want [2]", b)
		}
		s.Close()
		uv.UvtMust(t, ln.Close())
		stop()
		uv.UvtShutdown(t, u, false)
	})
}
