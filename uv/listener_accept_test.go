package uv_test

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// TestListenerAcceptOffLoop: once the first Accept has started the
// listener, an Accept queues nothing to the loop, on either driver,
// whether its connection was queued already or comes while it waits: it
// takes the connection, or waits for it, as net's Accept does, with no
// round trip through the loop. Nor do the connection's LocalAddr and
// RemoteAddr, read as it was accepted.
func TestListenerAcceptOffLoop(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		c0, s0 := v.pair(t) // the first Accept subscribes and starts
		const rounds = 50
		var got []*uv.IO
		before := v.u.Reactor.Stats().Queued
		// Queued ones: the clients connect before their Accept.
		dialN(t, v.ln, rounds/2)
		for range rounds / 2 {
			s, err := v.ln.AcceptIO(context.Background())
			uv.UvtMust(t, err)
			got = append(got, s)
		}
		// Awaited ones: the Accept waits before its client connects.
		for range rounds / 2 {
			acc := make(chan *uv.IO, 1)
			go func() {
				s, err := v.ln.AcceptIO(context.Background())
				if err != nil {
					t.Errorf("AcceptIO: %v", err)
				}
				acc <- s
			}()
			uv.UvtWaitFor(t, "the Accept to wait", func() bool { return uv.UvtAcceptsWaiting(v.ln) == 1 })
			dialN(t, v.ln, 1)
			if s := uv.UvtRecv(t, acc, "the awaited connection"); s != nil {
				got = append(got, s)
			}
		}
		for _, s := range got { // as net/http asks of each connection
			if s.LocalAddr() == nil || s.RemoteAddr() == nil {
				t.Errorf("accepted connection's addresses: %v, %v", s.LocalAddr(), s.RemoteAddr())
			}
		}
		if q := v.u.Reactor.Stats().Queued - before; q >= rounds/10 {
			t.Errorf("%d operations queued to the loop for %d Accepts after the first and their addresses, want none but the Stats call's", q, rounds)
		}
		closers := []interface{ Close() error }{c0, s0}
		for _, s := range got {
			closers = append(closers, s)
		}
		v.finish(t, closers...)
	})
}

// TestListenerAcceptQueueBounded: connections no Accept takes yet wait in
// the listener's queue only up to its backlog (and those accepted in the
// same turn); the next ones wait in the kernel's backlog, the socket
// unwatched, until an Accept takes one: nobody accepting does not make the
// queue grow without a bound, on either driver. Then every connection is
// taken, in full, none lost. So it goes whether the first Accept started
// the listener or Start did, with no callback to receive what it accepts
// (the connections wait for Accept, none is dropped).
func TestListenerAcceptQueueBounded(t *testing.T) {
	for _, startedBy := range []string{"Accept", "Start"} {
		t.Run(startedBy, func(t *testing.T) { testAcceptQueueBounded(t, startedBy == "Start") })
	}
}

func testAcceptQueueBounded(t *testing.T, byStart bool) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		const backlog, clients = 2, 10
		u, stop, ln := listenBacklog(t, d, backlog)
		ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
		defer cancel()
		// The first Accept starts the listener, or Start does.
		acc := make(chan *uv.IO, 1)
		if byStart {
			uv.UvtMust(t, ln.Start())
		} else {
			go func() {
				s, err := ln.AcceptIO(ctx)
				if err != nil {
					t.Errorf("AcceptIO: %v", err)
				}
				acc <- s
			}()
		}
		var cs []net.Conn
		dial := func(i int) {
			var dl net.Dialer
			c, err := dl.DialContext(ctx, "tcp4", ln.Addr().String())
			uv.UvtMust(t, err)
			if _, err := c.Write([]byte{byte(i)}); err != nil {
				t.Fatalf("client %d: %v", i, err)
			}
			cs = append(cs, c)
		}
		dial(0)
		var got []*uv.IO
		queued := clients // every connection waits for an Accept
		if !byStart {
			got = append(got, uv.UvtRecv(t, acc, "the first connection"))
			queued-- // but the first Accept's
		}
		// The others connect while nobody accepts: the kernel completes
		// the handshakes of those its backlog holds; the rest wait for
		// room, retrying.
		dialed := make(chan struct{})
		var connected atomic.Int32
		go func() {
			defer close(dialed)
			var wg sync.WaitGroup
			var mu sync.Mutex
			for i := 1; i < clients; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					var dl net.Dialer
					c, err := dl.DialContext(ctx, "tcp4", ln.Addr().String())
					if err != nil {
						t.Errorf("client %d: %v", i, err)
						return
					}
					c.Write([]byte{byte(i)})
					connected.Add(1)
					mu.Lock()
					cs = append(cs, c)
					mu.Unlock()
				}()
			}
			wg.Wait()
		}()
		// Until the listener stopped accepting and the kernel's backlog
		// is full, or every client got in and was accepted (a listener
		// with no bound).
		uv.UvtWaitFor(t, "the kernel's backlog to fill, or every client to be queued", func() bool {
			waiting, _, err := listenQueues(ln.Addr().(*net.TCPAddr))
			if err != nil {
				t.Skipf("the kernel's accept queue cannot be read here: %v", err)
			}
			return waiting > backlog && uv.UvtAcceptStalled(ln) ||
				connected.Load() == clients-1 && uv.UvtAcceptsQueued(ln) == queued
		})
		// At most the backlog; on the libuv driver also what the shim
		// accepted in the batch of the turn the queue reached it (at
		// most the backlog a turn, however many handshakes the kernel
		// completes meanwhile), where the pure-Go driver stops
		// accepting at the bound.
		limit := 2*backlog - 1
		if d == reactor.DriverGo {
			limit = backlog
		}
		if n := uv.UvtAcceptsQueued(ln); n > limit {
			t.Errorf("%d connections queued for Accept with nobody accepting, want at most %d", n, limit)
		}
		for len(got) < clients {
			s, err := ln.AcceptIO(ctx)
			if err != nil {
				t.Fatalf("AcceptIO after %d: %v", len(got), err)
			}
			got = append(got, s)
		}
		<-dialed
		seen := make(map[byte]bool)
		for _, s := range got {
			b := make([]byte, 1)
			if _, err := io.ReadFull(s, b); err != nil || seen[b[0]] {
				t.Errorf("a connection read %v, %v (seen already: %v)", b, err, seen[b[0]])
			}
			seen[b[0]] = true
			s.Close()
		}
		for _, c := range cs {
			c.Close()
		}
		uv.UvtMust(t, ln.Close())
		stop()
		uv.UvtShutdown(t, u, false)
	})
}

// TestListenerAcceptRaces: Accepts whose contexts end at random moments,
// connections arriving, and the listener's Close, all at once, on either
// driver: every connection is handed to one Accept at most (none twice),
// and the client of each one taken reads its Accept's byte; the others
// (queued at Close, or refused after it) read their end, none is left
// open; every Accept ends, after the Close with ErrClosed; nothing leaks.
func TestListenerAcceptRaces(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		const clients, acceptors = 60, 4
		addr := v.ln.Addr().String()
		var (
			mu    sync.Mutex
			taken = map[*uv.IO]bool{}
			twice int
		)
		accepted := make(chan struct{}, clients)
		var wg sync.WaitGroup
		endErrs := make(chan error, acceptors)
		for i := range acceptors {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rng := rand.New(rand.NewPCG(uint64(i), 1))
				for {
					ctx, cancel := context.WithCancel(context.Background())
					if rng.IntN(2) == 0 {
						d := time.Duration(rng.IntN(200)) * time.Microsecond
						time.AfterFunc(d, cancel)
					}
					s, err := v.ln.AcceptIO(ctx)
					cancel()
					switch {
					case err == nil:
						mu.Lock()
						if taken[s] {
							twice++
						}
						taken[s] = true
						mu.Unlock()
						s.Write([]byte{'k'})
						s.Close()
						accepted <- struct{}{}
					case errors.Is(err, context.Canceled):
					default:
						endErrs <- err
						return
					}
				}
			}()
		}
		reads := make(chan string, clients)
		for range clients {
			go func() {
				reads <- dialRead(addr)
			}()
		}
		for range clients / 2 {
			uv.UvtRecv(t, accepted, "a connection accepted")
		}
		uv.UvtMust(t, v.ln.Close())
		for range acceptors {
			if err := uv.UvtRecv(t, endErrs, "an Accept's end"); !errors.Is(err, net.ErrClosed) {
				t.Errorf("Accept after the listener's Close = %v, want net.ErrClosed", err)
			}
		}
		wg.Wait()
		mu.Lock()
		n, tw := len(taken), twice
		mu.Unlock()
		checkClientReads(t, reads, clients, n, tw)
		v.finish(t)
	})
}

// TestListenerAcceptReactorClosed: an Accept waiting when its reactor
// closes (the listener with it) ends with ErrClosed, as does one after,
// on either driver.
func TestListenerAcceptReactorClosed(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		v := newIOEnv(t, d, "tcp4")
		c, s := v.pair(t)
		c.Close()
		s.Close()
		errs := make(chan error, 1)
		go func() {
			_, err := v.ln.AcceptIO(context.Background())
			errs <- err
		}()
		uv.UvtWaitFor(t, "the Accept to wait", func() bool { return uv.UvtAcceptsWaiting(v.ln) == 1 })
		v.stop()
		uv.UvtShutdown(t, v.u, false)
		if err := uv.UvtRecv(t, errs, "the waiting Accept's end"); !errors.Is(err, net.ErrClosed) {
			t.Errorf("Accept waiting at the reactor's Close = %v, want net.ErrClosed", err)
		}
		if _, err := v.ln.AcceptIO(context.Background()); !errors.Is(err, net.ErrClosed) {
			t.Errorf("Accept after the reactor's Close = %v, want net.ErrClosed", err)
		}
	})
}

// TestAcceptMakesItsReadLane: the read lane of a connection Accept hands
// over, its os.File in Go's netpoller, is made by the Accept's goroutine,
// as package net's accepting goroutine makes its netFD, not by the loop,
// on either driver (the loop accepts the connection and makes its IO);
// the lane is open when Accept returns, and the connection's Reads go
// through it.
func TestAcceptMakesItsReadLane(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		c0, s0 := v.pair(t) // the first Accept subscribes and starts
		onLoop := uv.UvtLoopLaneFiles()
		const n = 10
		var closers []interface{ Close() error }
		peers := dialN(t, v.ln, n)
		for i := range n {
			s, err := v.ln.AcceptIO(context.Background())
			uv.UvtMust(t, err)
			closers = append(closers, s)
			if got := uv.UvtReadLane(s); got != "open" {
				t.Errorf("connection %d's read lane as Accept returns it: %s, want open", i, got)
			}
		}
		for i, p := range peers {
			_, err := p.Write([]byte{byte(i)})
			uv.UvtMust(t, err)
			closers = append(closers, p)
		}
		for i, s := range closers[:n] {
			if got := readN(t, s.(*uv.IO), 1); got[0] != byte(i) {
				t.Errorf("connection %d read %v", i, got)
			}
		}
		if got := uv.UvtLoopLaneFiles() - onLoop; got != 0 {
			t.Errorf("%d read lane files made on the loop for %d accepted connections, want 0", got, n)
		}
		v.finish(t, append(closers, c0, s0)...)
	})
}

// TestAcceptLaneMakingRacesReactorClose: a reactor that closes while
// Accepts take connections and make their read lanes closes each
// connection once, whichever comes first (the loop's close or the lane's
// making): every peer reads its connection's end, and no descriptor is
// left open, on either driver (with -race: no race between the two).
func TestAcceptLaneMakingRacesReactorClose(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		for round := range 8 {
			base, fds := uv.UvtBaseline(t)
			v := newIOEnv(t, d, "tcp4")
			c, s := v.pair(t)
			c.Close()
			s.Close()
			peers := dialN(t, v.ln, 16)
			var wg sync.WaitGroup
			var mu sync.Mutex
			var kept []*uv.IO
			for range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						s, err := v.ln.AcceptIO(context.Background())
						if err != nil {
							return
						}
						mu.Lock()
						kept = append(kept, s)
						mu.Unlock()
					}
				}()
			}
			if round%2 == 1 { // else the close comes while they are taken
				uv.UvtWaitFor(t, "every connection taken", func() bool {
					mu.Lock()
					defer mu.Unlock()
					return len(kept) == len(peers)
				})
			}
			v.stop()
			uv.UvtShutdown(t, v.u, false)
			wg.Wait()
			for _, s := range kept {
				if n, err := s.Read(make([]byte, 1)); n != 0 || err == nil {
					t.Errorf("a Read of a connection its reactor closed = %d, %v; want an error", n, err)
				}
				s.Close()
			}
			peersEnd(t, peers)
			uv.UvtNoLeaks(t, base, fds)
		}
	})
}

// TestReactorCloseWaitsForLaneMaking: the reactor's close of a
// connection whose read lane Accept's goroutine is making waits for that
// making (the loop yields until it ends) and then closes the connection
// once, through the lane's file: the close returns only after the making
// ends, the peer reads the end, the descriptor is closed and none is
// left. A making not yet begun when the reactor closes is taken back:
// Accept's goroutine makes no file then. On either driver.
func TestReactorCloseWaitsForLaneMaking(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		for _, begun := range []bool{true, false} {
			base, fds := uv.UvtBaseline(t)
			v := newIOEnv(t, d, "tcp4")
			c, s := v.pair(t) // the first Accept subscribes and starts
			c.Close()
			s.Close()
			peers := dialN(t, v.ln, 1)
			a, err := uv.UvtAcceptNoLane(v.ln)
			uv.UvtMust(t, err)
			fd := uv.UvtFDOf(t, a)
			if begun && !uv.UvtBeginLaneMaking(a) {
				t.Fatal("the making of an accepted connection's read lane could not begin")
			}
			waits := uv.UvtLaneMakingWaits()
			closed := make(chan struct{})
			go func() {
				v.stop()
				uv.UvtShutdown(t, v.u, false)
				close(closed)
			}()
			if begun {
				uv.UvtWaitFor(t, "the loop to wait for the making, or the close to return", func() bool {
					select {
					case <-closed:
						return true
					default:
						return uv.UvtLaneMakingWaits() > waits
					}
				})
				select {
				case <-closed:
					t.Fatal("the reactor's close returned while a read lane's making was under way")
				case <-time.After(50 * time.Millisecond):
				}
				uv.UvtEndLaneMaking(a)
			}
			uv.UvtRecv(t, closed, "the reactor's close")
			if !begun {
				if uv.UvtBeginLaneMaking(a) {
					t.Error("a read lane's making begun after the reactor closed the connection")
				}
				if l := uv.UvtReadLane(a); l != "none" {
					t.Errorf("the read lane of a connection closed before its making began: %s, want none", l)
				}
			}
			if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); !errors.Is(err, unix.EBADF) {
				t.Errorf("F_GETFD of the closed connection's descriptor = %v, want EBADF", err)
			}
			a.Close()
			peersEnd(t, peers)
			uv.UvtNoLeaks(t, base, fds)
		}
	})
}
