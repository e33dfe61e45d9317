package uv_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// TestListenerOwnersUnderChurnAttack: callbacks subscribe and unsubscribe
// from several goroutines while clients connect and Accepts wait with
// contexts that end at random moments. Each client writes its index; every
// index must reach exactly one owner, once. Then a last callback stays:
// every connection still queued must reach it (none left waiting for an
// Accept nobody makes while a callback is there). Nothing leaks. On either
// driver.
func TestListenerOwnersUnderChurnAttack(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		const clients = 300
		u, stop, ln := listenBacklog(t, d, 16)
		ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
		defer cancel()

		// A first connection through Accept: what the loop and the
		// netpoller make at first use is in both counts of descriptors.
		warm := make(chan struct{})
		go func() {
			defer close(warm)
			c, err := net.Dial("tcp4", ln.Addr().String())
			if err == nil {
				defer c.Close()
			}
		}()
		s, err := ln.AcceptIO(ctx)
		uv.UvtMust(t, err)
		<-warm
		s.Close()
		before := socketFDs()

		type owned struct {
			c   *uv.IO
			who string
		}
		got := make(chan owned, 4*clients)
		var cbs atomic.Int64
		var subs atomic.Int64
		newCB := func() event.CallbackFunc {
			who := fmt.Sprintf("callback %d", subs.Add(1))
			return func(_ event.Event, res any, err error) {
				if c, ok := res.(*uv.IO); ok {
					cbs.Add(1)
					got <- owned{c, who}
				} else if err != nil && !errors.Is(err, event.ErrClosed) {
					t.Errorf("listener callback: %v", err)
				}
			}
		}
		done := make(chan struct{})
		var churn sync.WaitGroup
		for g := range 3 {
			churn.Add(1)
			go func() {
				defer churn.Done()
				rnd := rand.New(rand.NewPCG(uint64(g), 1))
				for {
					select {
					case <-done:
						return
					default:
					}
					c, err := event.Subscribe(ln, newCB())
					if err != nil {
						t.Errorf("Subscribe: %v", err)
						return
					}
					time.Sleep(time.Duration(rnd.IntN(300)) * time.Microsecond)
					ln.DelCallback(c)
					time.Sleep(time.Duration(rnd.IntN(300)) * time.Microsecond)
				}
			}()
		}
		var accepts atomic.Int64
		for g := range 2 {
			churn.Add(1)
			go func() {
				defer churn.Done()
				rnd := rand.New(rand.NewPCG(uint64(g), 2))
				for {
					select {
					case <-done:
						return
					default:
					}
					actx, acancel := context.WithTimeout(ctx, time.Duration(rnd.IntN(400))*time.Microsecond)
					c, err := ln.AcceptIO(actx)
					acancel()
					if err == nil {
						accepts.Add(1)
						got <- owned{c, "accept"}
					} else if !errors.Is(err, context.DeadlineExceeded) {
						t.Errorf("AcceptIO: %v", err)
						return
					}
				}
			}()
		}

		// The clients, from a few goroutines: each writes its index.
		conns := make([]net.Conn, clients)
		var dialers sync.WaitGroup
		for g := range 4 {
			dialers.Add(1)
			go func() {
				defer dialers.Done()
				for i := g; i < clients; i += 4 {
					var dl net.Dialer
					c, err := dl.DialContext(ctx, "tcp4", ln.Addr().String())
					if err != nil {
						t.Errorf("client %d: %v", i, err)
						continue
					}
					var b [2]byte
					binary.BigEndian.PutUint16(b[:], uint16(i))
					if _, err := c.Write(b[:]); err != nil {
						t.Errorf("client %d: %v", i, err)
					}
					conns[i] = c
				}
			}()
		}

		seen := make(map[uint16][]string)
		var ios []*uv.IO
		// Several callbacks subscribed at once each hear of a connection
		// (the callbacks own it together); a callback hearing of it twice,
		// or a callback and an Accept both, is two owners.
		handed := make(map[*uv.IO][]string)
		take := func(o owned) {
			prev, ok := handed[o.c]
			for _, w := range prev {
				if w == o.who || w == "accept" || o.who == "accept" {
					t.Errorf("a connection handed to %v and again to %s", prev, o.who)
				}
			}
			handed[o.c] = append(prev, o.who)
			if ok {
				return
			}
			o.c.SetReadDeadline(time.Now().Add(5 * time.Second))
			var b [2]byte
			if _, err := io.ReadFull(o.c, b[:]); err != nil {
				t.Errorf("a connection (%s): %v", o.who, err)
				return
			}
			i := binary.BigEndian.Uint16(b[:])
			seen[i] = append(seen[i], o.who)
			ios = append(ios, o.c)
		}
		dialers.Wait()
		close(done)
		churn.Wait()
		// A callback that stays: whatever is queued goes to it.
		last, err := event.Subscribe(ln, newCB())
		uv.UvtMust(t, err)
		uv.UvtMust(t, ln.Start())
		deadline := time.After(5 * time.Second)
	collect:
		for len(ios) < clients {
			select {
			case o := <-got:
				take(o)
			case <-deadline:
				t.Errorf("%d of %d connections reached an owner; %d queued for Accept with a callback subscribed",
					len(ios), clients, uv.UvtAcceptsQueued(ln))
				break collect
			}
		}
		for i := range clients {
			if w := seen[uint16(i)]; len(w) != 1 {
				t.Errorf("client %d's connection went to %v, want one owner", i, w)
			}
		}
		t.Logf("%d by callbacks, %d by Accept", cbs.Load(), accepts.Load())
		ln.DelCallback(last)
		for _, c := range ios {
			c.Close()
		}
		for _, c := range conns {
			if c != nil {
				c.Close()
			}
		}
	drain:
		for {
			select {
			case o := <-got:
				if _, ok := handed[o.c]; !ok {
					t.Errorf("a connection (%s) handed out after every client's", o.who)
					o.c.Close()
				}
			default:
				break drain
			}
		}
		// The listener still open: every connection closed. Sockets
		// only: libuv opens a /dev/null of its own, for good, once
		// many descriptors are open.
		until := time.Now().Add(uv.UvtSafety)
		for diff := cmp.Diff(before, socketFDs()); diff != ""; diff = cmp.Diff(before, socketFDs()) {
			if time.Now().After(until) {
				t.Fatalf("sockets (-before +after):\n%s", diff)
			}
			time.Sleep(time.Millisecond)
		}
		uv.UvtMust(t, ln.Close())
		stop()
		uv.UvtShutdown(t, u, false)
	})
}

// socketFDs lists this process's open sockets (fdNames').
func socketFDs() map[string]string {
	m := fdNames()
	for fd, what := range m {
		if !strings.HasPrefix(what, "socket:") {
			delete(m, fd)
		}
	}
	return m
}

// TestListenerQueuedBeforeLaterAttack: a listener started with no callback
// queues a connection; a callback then subscribes from inside another
// event's notification, in the very turn that the listener accepts a
// second connection (both made ready while the loop was held). The callback
// must get the queued connection first, then the later one: the queued
// ones go to it "oldest first, before the later ones". On either driver.
func TestListenerQueuedBeforeLaterAttack(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		u, stop, ln := listenBacklog(t, d, 16)
		ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
		defer cancel()
		uv.UvtMust(t, ln.Start())
		first := dialWriting(t, ctx, ln, 1)[0] // writes 0
		defer first.Close()
		uv.UvtWaitFor(t, "the first connection queued", func() bool { return uv.UvtAcceptsQueued(ln) == 1 })

		fds, err := uv.UvtSocketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
		uv.UvtMust(t, err)
		x, err := uv.OpenPipe(u.Reactor, fds[0])
		uv.UvtMust(t, err)
		defer unix.Close(fds[1])
		got := make(chan *uv.IO, 4)
		subscribed := false
		_, err = event.Subscribe(x, func(_ event.Event, _ any, err error) {
			if subscribed || err != nil {
				return
			}
			subscribed = true
			if _, err := event.Subscribe(ln, func(_ event.Event, res any, _ error) {
				if c, ok := res.(*uv.IO); ok {
					got <- c
				}
			}); err != nil {
				t.Errorf("Subscribe: %v", err)
			}
		})
		uv.UvtMust(t, err)
		uv.UvtMust(t, x.Start())

		var second net.Conn
		// On the loop: nothing is dispatched until it returns, so the
		// pipe's bytes and the second connection are ready in one turn,
		// the bytes first.
		uv.UvtMust(t, u.Reactor.Call(func() {
			unix.Write(fds[1], []byte("go"))
			c, err := net.Dial("tcp4", ln.Addr().String())
			if err != nil {
				t.Errorf("dial: %v", err)
				return
			}
			c.Write([]byte{1})
			second = c
		}))
		if second != nil {
			defer second.Close()
		}
		var order []byte
		for range 2 {
			c := uv.UvtRecv(t, got, "a connection for the callback")
			c.SetReadDeadline(time.Now().Add(5 * time.Second))
			var b [1]byte
			if _, err := io.ReadFull(c, b[:]); err != nil {
				t.Errorf("a connection: %v", err)
			}
			order = append(order, b[0])
			c.Close()
		}
		if order[0] != 0 || order[1] != 1 {
			t.Errorf("the callback got the clients %v, want the queued one first: [0 1]", order)
		}
		uv.UvtMust(t, x.Close())
		uv.UvtMust(t, ln.Close())
		stop()
		uv.UvtShutdown(t, u, false)
	})
}
