package uv_test

import (
	"context"
	"runtime/debug"
	"sync"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// readOf is the bytes of an IO's read notification (a *[]byte result),
// for the tests that subscribe without OnRead.
func readOf(res any) ([]byte, bool) {
	p, ok := res.(*[]byte)
	if !ok || p == nil {
		return nil, false
	}
	return *p, true
}

// ioEnv is a served reactor with a listener on loopback, for the IO tests.
type ioEnv struct {
	network string
	u       *uv.UvtReactor
	ln      *uv.Listener
	stop    func()
}

// newIOEnv starts a reactor on driver d serving on its own goroutine and a
// listener on network's loopback address.
func newIOEnv(t *testing.T, d reactor.Driver, network string) *ioEnv {
	t.Helper()
	u := uv.UvtNewReactorOn(t, d)
	stop := uv.UvtServe(t, u)
	addr := "127.0.0.1:0"
	if network == "tcp6" {
		addr = "[::1]:0"
	}
	ln, err := uv.Listen(u.Reactor, network, addr)
	if err != nil {
		t.Fatalf("Listen: %v", err)
	}
	return &ioEnv{network: network, u: u, ln: ln, stop: stop}
}

// pair dials the listener and accepts: the client and server ends.
func (v *ioEnv) pair(t *testing.T) (client, server *uv.IO) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
	defer cancel()
	acc := make(chan *uv.IO, 1)
	go func() {
		c, err := v.ln.AcceptIO(ctx)
		if err != nil {
			t.Errorf("AcceptIO: %v", err)
		}
		acc <- c
	}()
	c, err := uv.Dial(ctx, v.u.Reactor, v.network, v.ln.Addr().String())
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	s := uv.UvtRecv(t, acc, "accepted connection")
	if s == nil {
		t.FailNow()
	}
	return c, s
}

// finish closes what the test left open, stops serving and checks the
// reactor shuts down with no handle left.
func (v *ioEnv) finish(t *testing.T, closers ...interface{ Close() error }) {
	t.Helper()
	for _, c := range closers {
		c.Close()
	}
	v.ln.Close()
	v.stop()
	uv.UvtShutdown(t, v.u, false)
}

// handlesLeft counts what the reactor holds: C handles, and the live
// handles of every kind (the pure-Go driver's descriptors among them).
func handlesLeft(u *uv.UvtReactor) int {
	s := u.Stats()
	n := s.CHandles
	for _, k := range s.Handles {
		n += k
	}
	return n
}

// debugGC sets GOGC to pct and returns the function restoring it.
func debugGC(pct int) func() {
	old := debug.SetGCPercent(pct)
	return func() { debug.SetGCPercent(old) }
}

// ioEachDriver runs f on each driver, as subtests, with a listener on
// network's loopback address.
func ioEachDriver(t *testing.T, network string, f func(t *testing.T, v *ioEnv)) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) { f(t, newIOEnv(t, d, network)) })
}

// eachNetwork runs f as a subtest on each driver, over IPv4 and over IPv6
// loopback.
func eachNetwork(t *testing.T, f func(t *testing.T, v *ioEnv)) {
	for _, network := range []string{"tcp4", "tcp6"} {
		t.Run(network, func(t *testing.T) { ioEachDriver(t, network, f) })
	}
}

// rawRead is unix.Read retried when a signal interrupts it. A socket with
// SO_RCVTIMEO set is not restarted after a signal handler (signal(7)), and
// the runtime signals its threads (preemption), so a blocking call from a
// test can end with EINTR.
func rawRead(fd int, b []byte) (int, error) {
	for {
		n, err := unix.Read(fd, b)
		if err != unix.EINTR {
			return n, err
		}
	}
}

// goWG runs fn on a goroutine of its own, counted in wg.
func goWG(wg *sync.WaitGroup, fn func()) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		fn()
	}()
}
