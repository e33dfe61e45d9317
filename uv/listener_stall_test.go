package uv_test

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"sort"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// listenBacklog starts a reactor on driver d serving on its own goroutine,
// and a listener on IPv4 loopback with the backlog given.
func listenBacklog(t *testing.T, d reactor.Driver, backlog int) (*uv.UvtReactor, func(), *uv.Listener) {
	t.Helper()
	u := uv.UvtNewReactorOn(t, d)
	stop := uv.UvtServe(t, u)
	ln, err := uv.ListenConfig{Backlog: backlog}.Listen(u.Reactor, "tcp4", "127.0.0.1:0")
	uv.UvtMust(t, err)
	return u, stop, ln
}

// oneQueuedForAccept makes a started listener with no callback and no
// Accept (listenBacklog's, backlog 4), and a client whose connection
// waits in the queue for Accept; the client is closed when the test ends.
func oneQueuedForAccept(t *testing.T, d reactor.Driver) (*uv.UvtReactor, func(), *uv.Listener, net.Conn) {
	t.Helper()
	u, stop, ln := listenBacklog(t, d, 4)
	uv.UvtMust(t, ln.Start())
	p, err := net.Dial("tcp4", ln.Addr().String())
	uv.UvtMust(t, err)
	t.Cleanup(func() { p.Close() })
	uv.UvtWaitFor(t, "the connection queued for Accept", func() bool { return uv.UvtAcceptsQueued(ln) == 1 })
	return u, stop, ln, p
}

// TestListenerAcceptStallStopStartClose: a listener whose queue for Accept
// is full (its backlog, 2) interleaved with Stop, Start and Close, on
// either driver. A stalled listener stays stalled across Stop and Start
// (Start does not watch the socket again) until an Accept takes from the
// full queue; a take while it is stopped ends the stall without watching,
// and the next Start takes the kernel's backlog. Every client connects
// without a retry (no more than the backlog's room waits in the kernel),
// every connection is accepted once and answers its client, or, at the
// Close, its client reads its end; nothing is left open.
func TestListenerAcceptStallStopStartClose(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		const backlog = 2
		u, stop, ln := listenBacklog(t, d, backlog)
		ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
		defer cancel()
		addr := ln.Addr().(*net.TCPAddr)

		var clients []net.Conn
		dial := func(i int) {
			t.Helper()
			var dl net.Dialer
			c, err := dl.DialContext(ctx, "tcp4", addr.String())
			uv.UvtMust(t, err)
			if _, err := c.Write([]byte{byte(i)}); err != nil {
				t.Fatalf("client %d: %v", i, err)
			}
			clients = append(clients, c)
		}
		// kernelWaiting waits for n connections in the kernel's accept
		// queue, where sock_diag can read it.
		kernelWaiting := func(what string, n int) {
			t.Helper()
			uv.UvtWaitFor(t, what, func() bool {
				waiting, _, err := listenQueues(addr)
				return err != nil || waiting == n
			})
		}
		queued := func(what string, n int, stalled bool) {
			t.Helper()
			uv.UvtWaitFor(t, what, func() bool { return uv.UvtAcceptsQueued(ln) == n })
			if got := uv.UvtAcceptStalled(ln); got != stalled {
				t.Fatalf("%s: stalled = %v, want %v", what, got, stalled)
			}
		}
		var served []byte // the byte of each connection accepted, in order
		accept := func(what string) {
			t.Helper()
			s, err := ln.AcceptIO(ctx)
			if err != nil {
				t.Fatalf("%s: AcceptIO: %v", what, err)
			}
			b := make([]byte, 1)
			if _, err := io.ReadFull(s, b); err != nil {
				t.Fatalf("%s: reading the client's byte: %v", what, err)
			}
			served = append(served, b[0])
			if _, err := s.Write([]byte{'k'}); err != nil {
				t.Errorf("%s: answering client %d: %v", what, b[0], err)
			}
			s.Close()
		}

		// The first Accept starts the listener.
		done := make(chan struct{})
		go func() { defer close(done); accept("the first") }()
		dial(0)
		uv.UvtRecv(t, done, "the first Accept")

		// fill dials clients from first on, one by one: backlog of
		// them fill the queue, inKernel more wait in the kernel.
		fill := func(first, inKernel int) {
			t.Helper()
			for i := range backlog {
				dial(first + i)
				queued("a connection queued", i+1, i+1 == backlog)
			}
			for i := range inKernel {
				dial(first + backlog + i)
			}
			kernelWaiting("connections in the kernel's backlog", inKernel)
		}
		// Two queued fill the queue; two more wait in the kernel.
		fill(1, 2)
		if n := uv.UvtAcceptsQueued(ln); n != backlog {
			t.Errorf("a stalled listener queued %d connections, want %d", n, backlog)
		}

		// A take while stopped ends the stall, and watches nothing.
		uv.UvtMust(t, ln.Stop())
		accept("a take while stopped")
		if uv.UvtAcceptStalled(ln) {
			t.Error("still stalled after a take from the full queue")
		}
		kernelWaiting("the kernel's backlog untouched while stopped", 2)
		if n := uv.UvtAcceptsQueued(ln); n != 1 {
			t.Errorf("a stopped listener queued %d connections, want 1", n)
		}
		// Start takes the kernel's backlog.
		uv.UvtMust(t, ln.Start())
		for range 3 {
			accept("after Start")
		}
		kernelWaiting("the kernel's backlog empty", 0)

		// Stop and Start while stalled: still stalled, until a take.
		fill(5, 1)
		uv.UvtMust(t, ln.Stop())
		uv.UvtMust(t, ln.Start())
		if !uv.UvtAcceptStalled(ln) {
			t.Error("Stop and Start ended the stall with the queue still full")
		}
		kernelWaiting("the kernel's backlog untouched by a Start while stalled", 1)
		if n := uv.UvtAcceptsQueued(ln); n != backlog {
			t.Errorf("a Start while stalled queued %d connections, want %d", n, backlog)
		}
		for range 3 {
			accept("after Stop and Start while stalled")
		}

		// Close while stalled: the queued connections are closed, the
		// kernel's are reset.
		fill(8, 1)
		uv.UvtMust(t, ln.Close())
		if _, err := ln.AcceptIO(ctx); !errors.Is(err, net.ErrClosed) {
			t.Errorf("AcceptIO after Close = %v, want net.ErrClosed", err)
		}

		sort.Slice(served, func(i, j int) bool { return served[i] < served[j] })
		if diff := cmp.Diff([]byte{0, 1, 2, 3, 4, 5, 6, 7}, served); diff != "" {
			t.Errorf("connections accepted (-want +got):\n%s", diff)
		}
		reads := map[string]int{}
		for i, c := range clients {
			c.SetReadDeadline(time.Now().Add(uv.UvtSafety)) // a hang fails instead
			b := make([]byte, 1)
			n, err := c.Read(b)
			switch {
			case n == 1 && b[0] == 'k' && i < 8:
				reads["answered"]++
			case n == 0 && i >= 8 && (errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET)):
				reads["ended"]++
			default:
				t.Errorf("client %d read %q, %v", i, b[:n], err)
			}
			c.Close()
		}
		if diff := cmp.Diff(map[string]int{"answered": 8, "ended": 3}, reads); diff != "" {
			t.Errorf("what the clients read (-want +got):\n%s", diff)
		}
		stop()
		uv.UvtShutdown(t, u, false)
	})
}

// TestListenerAcceptStallRaces: TestListenerAcceptRaces on a listener
// whose queue stalls (backlog 2), with Stop and Start from another
// goroutine at random moments as well, on either driver: Accepts whose
// contexts end at random, clients connecting (no more at once than the
// kernel's backlog holds, so that none waits for a SYN retry), Stop and
// Start, and the Close. Every connection goes to one Accept at most, and
// its client reads the Accept's byte; the others read their end or are
// refused; none hangs; every Accept ends with ErrClosed after the Close,
// no wait is left on the list, and nothing leaks.
func TestListenerAcceptStallRaces(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		const backlog, clients, acceptors = 2, 80, 4
		u, stop, ln := listenBacklog(t, d, backlog)
		addr := ln.Addr().String()
		var (
			mu    sync.Mutex
			taken = map[*uv.IO]bool{}
			twice int
		)
		accepted := make(chan struct{}, clients)
		var started atomic.Bool // an Accept started the listener
		endErrs := make(chan error, acceptors)
		var wg sync.WaitGroup
		for i := range acceptors {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rng := rand.New(rand.NewPCG(uint64(i), 2))
				for {
					ctx, cancel := randomCtx(context.Background(), rng)
					s, err := ln.AcceptIO(ctx)
					cancel()
					switch {
					case err == nil && s != nil:
						mu.Lock()
						if taken[s] {
							twice++
						}
						taken[s] = true
						mu.Unlock()
						started.Store(true)
						s.Write([]byte{'k'})
						s.Close()
						accepted <- struct{}{}
					case err == nil:
						endErrs <- errors.New("AcceptIO returned a nil IO and a nil error")
						return
					case errors.Is(err, context.Canceled):
					default:
						endErrs <- err
						return
					}
				}
			}()
		}
		// Stop and Start at random until the Close.
		closed := make(chan struct{})
		toggled := make(chan struct{})
		go func() {
			defer close(toggled)
			uv.UvtWaitFor(t, "the first Accept to start the listener", started.Load)
			rng := rand.New(rand.NewPCG(9, 9))
			for {
				select {
				case <-closed:
					return
				default:
				}
				if ln.Stop() != nil {
					return // closed
				}
				time.Sleep(time.Duration(rng.IntN(300)) * time.Microsecond)
				if ln.Start() != nil {
					return
				}
				time.Sleep(time.Duration(rng.IntN(300)) * time.Microsecond)
			}
		}()
		reads := make(chan string, clients)
		// The clients connected and not answered yet: no more than the
		// kernel's backlog holds.
		room := make(chan struct{}, backlog+1)
		for range clients {
			go func() {
				room <- struct{}{}
				defer func() { <-room }()
				reads <- dialRead(addr)
			}()
		}
		for range clients / 2 {
			uv.UvtRecv(t, accepted, "a connection accepted")
		}
		close(closed)
		uv.UvtMust(t, ln.Close())
		uv.UvtRecv(t, toggled, "the end of Stop and Start")
		for range acceptors {
			if err := uv.UvtRecv(t, endErrs, "an Accept's end"); !errors.Is(err, net.ErrClosed) {
				t.Errorf("Accept after the listener's Close = %v, want net.ErrClosed", err)
			}
		}
		wg.Wait()
		if n := uv.UvtAcceptsWaiting(ln); n != 0 {
			t.Errorf("%d waits left on the list after the Close", n)
		}
		mu.Lock()
		n, tw := len(taken), twice
		mu.Unlock()
		checkClientReads(t, reads, clients, n, tw)
		stop()
		uv.UvtShutdown(t, u, false)
	})
}

// dialRead connects to addr and reads a byte: what it read, "end" (EOF or
// a reset), "refused" (no listener), or the error. A hang fails at the
// safety deadline.
func dialRead(addr string) string {
	c, err := net.Dial("tcp4", addr)
	if err != nil {
		return "refused"
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(uv.UvtSafety))
	b := make([]byte, 1)
	n, err := c.Read(b)
	switch {
	case n == 1:
		return string(b)
	case errors.Is(err, io.EOF), errors.Is(err, syscall.ECONNRESET):
		return "end"
	}
	return err.Error()
}

// checkClientReads gathers what each of the clients read (dialRead) and
// checks that the taken connections accepted, none handed twice, were
// those whose client read the Accept's byte, and that the others read
// their end or were refused.
func checkClientReads(t *testing.T, reads <-chan string, clients, taken, twice int) {
	t.Helper()
	got := map[string]int{}
	for range clients {
		got[uv.UvtRecv(t, reads, "a client's read")]++
	}
	t.Logf("clients read %v", got)
	if twice > 0 {
		t.Errorf("%d connections handed to two Accepts", twice)
	}
	if got["k"] != taken || got["k"]+got["end"]+got["refused"] != clients {
		t.Errorf("clients read %v; %d connections accepted of %d: want each accepted one to read its byte, the others their end", got, taken, clients)
	}
}

// randomCtx is parent with a cancel that rng decides comes at once, after
// up to 200µs, or never (but by the function returned).
func randomCtx(parent context.Context, rng *rand.Rand) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(parent)
	switch rng.IntN(3) {
	case 0:
		cancel()
	case 1:
		time.AfterFunc(time.Duration(rng.IntN(200))*time.Microsecond, cancel)
	}
	return ctx, cancel
}
