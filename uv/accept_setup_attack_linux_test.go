package uv_test

import (
	"context"
	"errors"
	"net"
	"runtime"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// Attacks on an accepted TCP connection's setup (TCP_NODELAY, the read of
// its local address), made by the goroutine of the Accept that takes it
// (ioEvent.setUp, handed over with the read lane's making), while the
// loop may take it back (the IO's close, a callback getting the
// connection instead).

// TestAttackAcceptSetupReactorClose: the reactor closes while Accepts
// take the connections queued for them, so that its close may take a
// connection's setup back from the Accept it was handed to: every
// connection an Accept returns, closed or not, still has the addresses
// the listener read as it accepted it (the peer's from accept4(2)), as a
// net.Conn keeps its addresses once closed. On either driver.
func TestAttackAcceptSetupReactorClose(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		before := warmFDNames(t)
		var noAddr, returned int
		for range 12 {
			u, stop, ln := listenBacklog(t, d, 64)
			uv.UvtMust(t, ln.Start())
			const queued = 48
			peers := dialN(t, ln, queued)
			uv.UvtWaitFor(t, "the connections queued for Accept", func() bool { return uv.UvtAcceptsQueued(ln) == queued })
			type got struct {
				s             *uv.IO
				local, remote net.Addr
			}
			var mu sync.Mutex
			var all []got
			var wg sync.WaitGroup
			start := make(chan struct{})
			for range 8 {
				goWG(&wg, func() {
					<-start
					for {
						s, err := ln.AcceptIO(context.Background())
						if err != nil {
							return
						}
						g := got{s: s, local: s.LocalAddr(), remote: s.RemoteAddr()}
						mu.Lock()
						all = append(all, g)
						mu.Unlock()
					}
				})
			}
			close(start)
			stop()
			if err := u.Close(); err != nil {
				t.Errorf("reactor Close = %v", err)
			}
			wg.Wait()
			for _, g := range all {
				returned++
				if g.local == nil || g.remote == nil {
					noAddr++
					if noAddr <= 3 {
						t.Errorf("a connection Accept returned as its reactor closed: LocalAddr %v, RemoteAddr %v; want both, read as it was accepted", g.local, g.remote)
					}
				}
				g.s.Close()
			}
			for _, p := range peers {
				p.Close()
			}
		}
		if noAddr > 0 {
			t.Errorf("%d of %d connections Accept returned had lost their addresses", noAddr, returned)
		}
		waitSockets(t, before)
	})
}

// TestAttackAcceptSetupCancelledAccepts: Accepts whose contexts end at
// every point (before the call, at once, or while it waits) take 40
// connections: none is lost to an Accept that gave up (the next Accept
// gets it), none is taken twice, and each one an Accept returned is set
// up when it returns (TCP_NODELAY on, both addresses), whether its
// Accept's context ended or not. On either driver.
func TestAttackAcceptSetupCancelledAccepts(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		c0, s0 := v.pair(t)
		const n = 40
		var mu sync.Mutex
		var want []setUpAs
		var accepted []*uv.IO
		var addrs []setUpAs // as read by the Accept's goroutine when it returned
		var wg sync.WaitGroup
		all, allTaken := context.WithCancel(context.Background()) // the last Accepts waiting give up
		defer allTaken()
		var dialed sync.WaitGroup
		dialed.Add(1)
		goWG(&wg, func() {
			defer dialed.Done()
			for _, p := range dialN(t, v.ln, n) {
				mu.Lock()
				want = append(want, setUpAs{NoDelay: true, Local: v.ln.Addr().String(), Remote: p.LocalAddr().String()})
				mu.Unlock()
			}
		})
		for w := range 4 {
			goWG(&wg, func() {
				for i := 0; ; i++ {
					mu.Lock()
					done := len(accepted) >= n
					mu.Unlock()
					if done {
						return
					}
					ctx, cancel := context.WithCancel(all)
					switch (w + i) % 4 {
					case 0:
						cancel() // ended before the call
					case 1:
						go cancel() // ends at once, somewhere in the call
					case 2:
						go func() { runtime.Gosched(); cancel() }()
					}
					s, err := v.ln.AcceptIO(ctx)
					cancel()
					if err != nil {
						if !errors.Is(err, context.Canceled) {
							t.Errorf("AcceptIO = %v; want a connection, or its context's end", err)
							return
						}
						continue
					}
					got := setUpAs{NoDelay: true}
					if a := s.LocalAddr(); a != nil {
						got.Local = a.String()
					}
					if a := s.RemoteAddr(); a != nil {
						got.Remote = a.String()
					}
					mu.Lock()
					accepted = append(accepted, s)
					addrs = append(addrs, got)
					if len(accepted) == n {
						allTaken()
					}
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		dialed.Wait()
		if len(accepted) != n {
			t.Fatalf("%d connections accepted, want %d", len(accepted), n)
		}
		for i, s := range accepted {
			nd, err := uv.UvtSockoptInt(t, s, unix.IPPROTO_TCP, unix.TCP_NODELAY)
			addrs[i].NoDelay = err == nil && nd != 0
		}
		if d := setUpsDiff(want, addrs); d != "" {
			t.Errorf("the connections Accepts returned, as they returned them (-want +got):\n%s", d)
		}
		var closers []interface{ Close() error }
		for _, s := range accepted {
			closers = append(closers, s)
		}
		v.finish(t, append(closers, c0, s0)...)
	})
}

// TestAttackAcceptSetupCallsAtOnce: the calls other goroutines make on a
// connection the moment Accept returns it (LocalAddr, RemoteAddr,
// SetNoDelay(false), SetKeepAlive(true)) find its setup made, and nothing
// of the setup comes after them: TCP_NODELAY stays off once
// SetNoDelay(false) returned, and the addresses read are the listener's
// and the peer's. On either driver, under -race.
func TestAttackAcceptSetupCallsAtOnce(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		c0, s0 := v.pair(t)
		const n = 16
		peers := dialN(t, v.ln, n)
		uv.UvtWaitFor(t, "the connections queued for Accept", func() bool { return uv.UvtAcceptsQueued(v.ln) == n })
		want := setUpsOf(v.ln, peers, false)
		var got []setUpAs
		var closers []interface{ Close() error }
		for range n {
			s, err := v.ln.AcceptIO(context.Background())
			uv.UvtMust(t, err)
			closers = append(closers, s)
			var wg sync.WaitGroup
			var local, remote net.Addr
			goWG(&wg, func() { local = s.LocalAddr() })
			goWG(&wg, func() { remote = s.RemoteAddr() })
			goWG(&wg, func() {
				if err := s.SetNoDelay(false); err != nil {
					t.Errorf("SetNoDelay(false) = %v", err)
				}
			})
			goWG(&wg, func() {
				if err := s.SetKeepAlive(true); err != nil {
					t.Errorf("SetKeepAlive(true) = %v", err)
				}
			})
			wg.Wait()
			as := setUpOf(t, s)
			if local == nil || remote == nil || as.Local != local.String() || as.Remote != remote.String() {
				t.Errorf("addresses read at once %v, %v; read after %+v", local, remote, as)
			}
			got = append(got, as)
		}
		if d := setUpsDiff(want, got); d != "" {
			t.Errorf("the connections after SetNoDelay(false) (-want +got):\n%s", d)
		}
		v.finish(t, append(closers, c0, s0)...)
	})
}

// TestAttackAcceptSetupPeerReset: a peer that resets its connection
// before an Accept takes it (its setup not made yet): the Accept still
// returns it set up as package net's Accept gives such a connection, its
// local address the listener's and its peer's the one accept4(2) gave.
// On either driver, the reset before the loop accepts or once queued.
func TestAttackAcceptSetupPeerReset(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		c0, s0 := v.pair(t)
		for i := range 8 {
			p, err := net.Dial("tcp4", v.ln.Addr().String())
			uv.UvtMust(t, err)
			if i%2 == 1 {
				uv.UvtWaitFor(t, "the connection queued for Accept", func() bool { return uv.UvtAcceptsQueued(v.ln) == 1 })
			}
			want := setUpAs{NoDelay: true, Local: v.ln.Addr().String(), Remote: p.LocalAddr().String()}
			uv.UvtMust(t, p.(*net.TCPConn).SetLinger(0))
			uv.UvtMust(t, p.Close())
			s, err := v.ln.AcceptIO(context.Background())
			uv.UvtMust(t, err)
			if d := cmp.Diff(want, setUpOf(t, s)); d != "" {
				t.Errorf("connection %d, reset by its peer before Accept (-want +got):\n%s", i, d)
			}
			uv.UvtMust(t, s.Close())
		}
		v.finish(t, c0, s0)
	})
}

// setUpsDiff compares the setups of connections in any order (sorted by
// the peer's address), as cmp.Diff does.
func setUpsDiff(want, got []setUpAs) string {
	less := func(a, b setUpAs) int { return cmpString(a.Remote, b.Remote) }
	slices.SortFunc(want, less)
	slices.SortFunc(got, less)
	return cmp.Diff(want, got)
}

// setUpsOf is what the server ends of peers, accepted by ln, are set up as
// (TCP_NODELAY as noDelay says).
func setUpsOf(ln *uv.Listener, peers []net.Conn, noDelay bool) []setUpAs {
	var want []setUpAs
	for _, p := range peers {
		want = append(want, setUpAs{NoDelay: noDelay, Local: ln.Addr().String(), Remote: p.LocalAddr().String()})
	}
	return want
}
