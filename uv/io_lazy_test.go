package uv_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// The libuv driver leaves an accepted TCP connection unopened in libuv
// while it is served through its lanes (uv/io_lazy_uv.go); these tests pin
// its rules. On the pure-Go driver, which has no libuv handles, they check
// the same behaviour (bytes in order, one close).

// libuvOnly skips a subtest on the pure-Go driver, saying why.
func libuvOnly(t *testing.T, v *ioEnv) {
	t.Helper()
	if v.u.Driver() != reactor.DriverLibuv {
		t.Skip("the pure-Go driver has no libuv handle to leave unopened")
	}
}

// TestAcceptedServedByLanesHasNoHandle: a connection Accept handed over
// and used only through blocking Reads and Writes (net/http's way) makes
// no libuv handle: the C handles stay as they were, it is never opened,
// and it holds one descriptor, its socket.
func TestAcceptedServedByLanesHasNoHandle(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		libuvOnly(t, v)
		before := v.u.Stats().CHandles
		opens := uv.UvtLazyOpens()
		c, s := v.pair(t)
		for i := range 20 {
			msg := []byte{byte(i), byte(i + 1)}
			_, err := c.Write(msg)
			uv.UvtMust(t, err)
			if got := readN(t, s, 2); !bytes.Equal(got, msg) {
				t.Fatalf("server Read %d = %v, want %v", i, got, msg)
			}
			_, err = s.Write(msg)
			uv.UvtMust(t, err)
			if got := readN(t, c, 2); !bytes.Equal(got, msg) {
				t.Fatalf("client Read %d = %v, want %v", i, got, msg)
			}
		}
		s.SetDeadline(time.Now().Add(time.Hour)) // deadlines, addresses, keep-alive: no libuv either
		if s.LocalAddr() == nil || s.RemoteAddr() == nil {
			t.Errorf("addresses %v, %v; want both", s.LocalAddr(), s.RemoteAddr())
		}
		uv.UvtMust(t, s.SetKeepAliveConfig(net.KeepAliveConfig{Enable: true, Idle: 7 * time.Second, Interval: 3 * time.Second, Count: 4}))
		if on, err := uv.UvtSockoptInt(t, s, syscall.SOL_SOCKET, syscall.SO_KEEPALIVE); err != nil || on != 1 {
			t.Errorf("SO_KEEPALIVE after SetKeepAliveConfig = %d, %v; want 1", on, err)
		}
		if uv.UvtOpenedInLibuv(s) {
			t.Errorf("the accepted connection was opened in libuv")
		}
		// The client (dialled: a handle) is the only new C handle.
		if got := v.u.Stats().CHandles; got != before+1 {
			t.Errorf("%d C handles, want %d (the dialled end's only)", got, before+1)
		}
		if n := uv.UvtIODescriptors(s); n != 1 {
			t.Errorf("the accepted connection holds %d descriptors, want 1", n)
		}
		if n := uv.UvtLazyOpens() - opens; n != 0 {
			t.Errorf("%d connections opened in libuv, want 0", n)
		}
		v.finish(t, c, s)
	})
}

// TestAcceptedOpenedBySubscription: bytes read through the lane, then a
// callback subscribed and the IO started (which opens it in libuv, over a
// duplicate of the socket), then Reads again once it is stopped: the
// stream's bytes, each once, in order, while the peer writes on.
func TestAcceptedOpenedBySubscription(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		c, s := v.pair(t)
		const total = 1 << 20
		want := make([]byte, total)
		for i := range want {
			want[i] = byte(i * 7 / 3)
		}
		var wrote sync.WaitGroup
		wrote.Add(1)
		go func() {
			defer wrote.Done()
			for off := 0; off < total; off += 4096 {
				if _, err := c.Write(want[off : off+4096]); err != nil {
					t.Errorf("client Write: %v", err)
					return
				}
			}
		}()
		got := readN(t, s, 1000) // through the lane
		var mu sync.Mutex
		enough := make(chan struct{})
		closed := false
		uv.UvtMust(t, v.u.Call(func() {
			_, err := s.OnRead(func(p []byte, err error) {
				if err != nil {
					return
				}
				mu.Lock()
				defer mu.Unlock()
				got = append(got, p...)
				if len(got) >= total/2 && !closed {
					closed = true
					s.Stop() // on the loop: no read after this one reaches the callbacks
					close(enough)
				}
			})
			uv.UvtMust(t, err)
			uv.UvtMust(t, s.Start())
		}))
		uv.UvtRecv(t, enough, "half the stream, by the callbacks")
		if v.u.Driver() == reactor.DriverLibuv {
			if !uv.UvtOpenedInLibuv(s) {
				t.Errorf("a started connection is not open in libuv")
			}
			if n := uv.UvtIODescriptors(s); n != 2 {
				t.Errorf("the opened connection holds %d descriptors, want 2 (the lane's file, libuv's duplicate)", n)
			}
		}
		mu.Lock()
		rest := readN(t, s, total-len(got)) // the kept bytes, then the lane again
		got = append(got, rest...)
		mu.Unlock()
		wrote.Wait()
		if !bytes.Equal(got, want) {
			i := 0
			for i < len(got) && got[i] == want[i] {
				i++
			}
			t.Fatalf("the stream differs from byte %d of %d", i, len(got))
		}
		v.finish(t, c, s)
	})
}

// TestAcceptedUnopenedClosesOnce: closing a connection never opened in
// libuv closes its one socket before Close returns (the peer reads the
// end), a second Close does nothing, and an Abort resets it.
func TestAcceptedUnopenedClosesOnce(t *testing.T) {
	for _, how := range []string{"close", "abort", "unlaned"} {
		t.Run(how, func(t *testing.T) {
			ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
				var c, s *uv.IO
				if how == "unlaned" {
					c, s = acceptByCallback(t, v)
				} else {
					c, s = v.pair(t)
				}
				if v.u.Driver() == reactor.DriverLibuv && uv.UvtOpenedInLibuv(s) {
					t.Fatalf("the accepted connection is open in libuv before any use")
				}
				before := uv.UvtOpenSockets(t)
				if how == "abort" {
					if err := s.Abort(); err != nil && !errors.Is(err, uv.ErrAborted) {
						t.Fatalf("Abort = %v", err)
					}
				} else {
					uv.UvtMust(t, s.Close())
				}
				if got := uv.UvtOpenSockets(t); got != before-1 {
					t.Errorf("%d sockets open after Close, want %d", got, before-1)
				}
				if err := s.Close(); err != nil {
					t.Errorf("second Close = %v, want nil", err)
				}
				if got := uv.UvtOpenSockets(t); got != before-1 {
					t.Errorf("%d sockets open after a second Close, want %d", got, before-1)
				}
				c.SetReadDeadline(time.Now().Add(uv.UvtSafety))
				n, err := c.Read(make([]byte, 1))
				switch {
				case how == "abort" && !errors.Is(err, syscall.ECONNRESET):
					t.Errorf("the peer's Read after Abort = %d, %v; want ECONNRESET", n, err)
				case how != "abort" && (n != 0 || err != io.EOF):
					t.Errorf("the peer's Read after Close = %d, %v; want the end", n, err)
				}
				v.finish(t, c)
			})
		})
	}
}

// acceptByCallback makes a connection whose server end the listener's
// callback takes (no lane: nothing reads it yet).
func acceptByCallback(t *testing.T, v *ioEnv) (c, s *uv.IO) {
	t.Helper()
	got := make(chan *uv.IO, 1)
	cb, err := event.Subscribe(v.ln, func(_ event.Event, res any, err error) {
		if c, ok := res.(*uv.IO); ok && err == nil {
			got <- c
		}
	})
	uv.UvtMust(t, err)
	uv.UvtMust(t, v.ln.Start())
	ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
	defer cancel()
	c, err = uv.Dial(ctx, v.u.Reactor, "tcp4", v.ln.Addr().String())
	uv.UvtMust(t, err)
	s = uv.UvtRecv(t, got, "the accepted connection")
	uv.UvtMust(t, v.ln.Stop())
	uv.UvtMust(t, v.ln.DelCallback(cb))
	return c, s
}

// TestReactorClosedWithUnopenedConnections: a reactor closed, or dropped
// without Close and collected, while it holds accepted connections never
// opened in libuv (with a read lane, and without) leaves no descriptor
// open, and the peers read the end.
func TestReactorClosedWithUnopenedConnections(t *testing.T) {
	t.Run("close", func(t *testing.T) {
		base, fds := uv.UvtBaseline(t)
		peers := unopenedOnReactor(t, true, nil)
		peersEnd(t, peers)
		uv.UvtNoLeaks(t, base, fds)
	})
	t.Run("close-laned", func(t *testing.T) {
		base, fds := uv.UvtBaseline(t)
		peers := lanedOnReactor(t)
		peersEnd(t, peers)
		uv.UvtNoLeaks(t, base, fds)
	})
	t.Run("dropped", func(t *testing.T) {
		base, fds := uv.UvtBaseline(t)
		var peers []net.Conn
		var collected atomic.Int32
		for range 4 {
			peers = append(peers, unopenedOnReactor(t, false, &collected)...)
		}
		uv.UvtWaitFor(t, "every dropped reactor to be collected", func() bool {
			runtime.GC()
			return collected.Load() == 4
		})
		peersEnd(t, peers) // their ends: the reactors' sockets closed
		uv.UvtNoLeaks(t, base, fds)
	})
}

// peersEnd checks that each peer reads the end of its connection, and
// closes it.
func peersEnd(t *testing.T, peers []net.Conn) {
	t.Helper()
	for _, p := range peers {
		p.SetReadDeadline(time.Now().Add(uv.UvtSafety))
		if n, err := p.Read(make([]byte, 1)); n != 0 || err == nil {
			t.Errorf("a peer's Read after its reactor went = %d, %v; want the end", n, err)
		}
		p.Close()
	}
}

// unopenedOnReactor makes a libuv reactor holding four accepted
// connections never opened in libuv, held by the listener's callback,
// stops its listener, and closes it, or drops it (collected counts it
// once collected); the peers (package net's) are returned.
func unopenedOnReactor(t *testing.T, closeIt bool, collected *atomic.Int32) []net.Conn {
	t.Helper()
	// reactor.New, not UvtNewReactorOn: the helper's cleanup would hold
	// the reactor.
	r, err := reactor.New(reactor.Options{Driver: reactor.DriverLibuv})
	if errors.Is(err, reactor.ErrNoLibuv) {
		t.Skip("the libuv driver is not in this build (no cgo)")
	}
	uv.UvtMust(t, err)
	if collected != nil {
		runtime.AddCleanup(r, func(c *atomic.Int32) { c.Add(1) }, collected)
	}
	ln, err := uv.Listen(r, "tcp4", "127.0.0.1:0")
	uv.UvtMust(t, err)
	var peers []net.Conn
	// The callback keeps no IO: an IO a callback of the reactor's holds
	// holds the reactor through its reference's cleanup, so the reactor
	// could not be collected. Each IO is checked unopened as it comes.
	held, opened := 0, 0
	_, err = event.Subscribe(ln, func(_ event.Event, res any, err error) {
		if c, ok := res.(*uv.IO); ok && err == nil {
			held++
			if uv.UvtOpenedInLibuv(c) {
				opened++
			}
		}
	})
	uv.UvtMust(t, err)
	uv.UvtMust(t, ln.Start())
	for range 4 {
		p, err := net.Dial("tcp4", ln.Addr().String())
		uv.UvtMust(t, err)
		peers = append(peers, p)
	}
	turnUntil(t, r, func() bool { return held == 4 })
	uv.UvtMust(t, ln.Stop()) // a started event holds its reactor
	if opened != 0 {
		t.Fatalf("%d accepted connections open in libuv before any use", opened)
	}
	if closeIt {
		uv.UvtMust(t, r.Close())
	}
	return peers
}

// lanedOnReactor makes a libuv reactor, served, holding two connections
// Accept handed over (unopened in libuv, each with its read lane over its
// own socket), and closes it; the peers are returned.
func lanedOnReactor(t *testing.T) []net.Conn {
	t.Helper()
	r, err := reactor.New(reactor.Options{Driver: reactor.DriverLibuv})
	if errors.Is(err, reactor.ErrNoLibuv) {
		t.Skip("the libuv driver is not in this build (no cgo)")
	}
	uv.UvtMust(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- r.Serve(ctx) }()
	ln, err := uv.Listen(r, "tcp4", "127.0.0.1:0")
	uv.UvtMust(t, err)
	var peers []net.Conn
	for range 2 {
		p, err := net.Dial("tcp4", ln.Addr().String())
		uv.UvtMust(t, err)
		peers = append(peers, p)
		c, err := ln.AcceptIO(context.Background())
		uv.UvtMust(t, err)
		if uv.UvtOpenedInLibuv(c) || uv.UvtReadLane(c) == "none" {
			t.Fatalf("an accepted connection is open in libuv, or has no read lane")
		}
	}
	cancel()
	<-served
	uv.UvtMust(t, r.Close())
	return peers
}
