package uv_test

import (
	"context"
	"net"
	"sync"
	"testing"

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
