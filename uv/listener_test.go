package uv_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/eventkind"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
	"golang.org/x/sys/unix"
)

// TestListenerCallbacks: a started listener notifies each connection as an
// *IO result, on the loop goroutine; stopped, it leaves new connections in
// the kernel's backlog until it is started again.
func TestListenerCallbacks(t *testing.T) {
	eachNetwork(t, func(t *testing.T, v *ioEnv) {
		network := v.network
		cs := uv.UvtSubscribe(t, v.ln, v.u.Owner().Owned)
		uv.UvtMust(t, v.ln.Start())
		nc, err := net.Dial(network, v.ln.Addr().String())
		uv.UvtMust(t, err)
		call := cs.Next(t)
		s, ok := call.Result.(*uv.IO)
		if !ok || call.Err != nil || !call.OnLoop {
			t.Fatalf("notification = %v, %v (on loop %v), want an *IO on the loop", call.Result, call.Err, call.OnLoop)
		}
		if got, want := s.RemoteAddr().String(), nc.LocalAddr().String(); got != want {
			t.Errorf("accepted RemoteAddr = %s, want %s", got, want)
		}
		// Stopped: a connection waits in the backlog, unseen.
		uv.UvtMust(t, v.ln.Stop())
		nc2, err := net.Dial(network, v.ln.Addr().String())
		uv.UvtMust(t, err)
		nc2.Write([]byte("x")) // a round trip through the loop
		uv.UvtMust(t, s.Close())
		if n := cs.N(); n != 1 {
			t.Errorf("%d notifications while stopped, want 1 in all", n)
		}
		uv.UvtMust(t, v.ln.Start())
		call = cs.Next(t)
		s2, ok := call.Result.(*uv.IO)
		if !ok {
			t.Fatalf("after Start: %v, %v; want the pending connection", call.Result, call.Err)
		}
		if b := make([]byte, 1); func() bool { n, _ := s2.Read(b); return n != 1 || b[0] != 'x' }() {
			t.Error("the connection taken after Start lost its bytes")
		}
		re := regexp.MustCompile(`^Listener\(` + network + ` \S+:\d+, accepted=2, failed=0\)$`)
		if info := v.ln.Info(); !re.MatchString(info) {
			t.Errorf("Info = %q, want %s", info, re)
		}
		nc.Close()
		nc2.Close()
		v.finish(t, s2)
	})
}

func TestListenerReusePort(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		addr := v.ln.Addr().String()
		if _, err := uv.Listen(v.u.Reactor, "tcp4", addr); !errors.Is(err, syscall.EADDRINUSE) {
			t.Errorf("second Listen on %s = %v, want EADDRINUSE", addr, err)
		}
		lc := uv.ListenConfig{ReusePort: true, Backlog: 16}
		a, err := lc.Listen(v.u.Reactor, "tcp4", "127.0.0.1:0")
		uv.UvtMust(t, err)
		b, err := lc.Listen(v.u.Reactor, "tcp4", a.Addr().String())
		if err != nil {
			t.Fatalf("two listeners with ReusePort on one port: %v", err)
		}
		if a.Addr().String() != b.Addr().String() {
			t.Errorf("addresses %s and %s differ", a.Addr(), b.Addr())
		}
		v.finish(t, a, b)
	})
}

func TestListenerBadInput(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		for _, tc := range []struct{ network, addr string }{
			{"udp", "127.0.0.1:0"},
			{"tcp", "no-port"},
			{"tcp4", "[::1]:0"},
			{"tcp4", "192.0.2.1:0"}, // not a local address: EADDRNOTAVAIL
		} {
			if l, err := uv.Listen(v.u.Reactor, tc.network, tc.addr); err == nil {
				t.Errorf("Listen(%q, %q) succeeded", tc.network, tc.addr)
				l.Close()
			}
		}
		if _, err := uv.Listen(nil, "tcp", "127.0.0.1:0"); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("Listen(nil reactor) = %v, want EINVAL", err)
		}
		// The reactor goes on: the env's listener still accepts.
		c, s := v.pair(t)
		// Accept on a closed listener fails with ErrClosed, as does a waiting one.
		errs := make(chan error, 1)
		go func() {
			_, err := v.ln.Accept()
			errs <- err
		}()
		uv.UvtWaitFor(t, "Accept to wait", func() bool { return eventkind.LoopRefs(v.ln) > 0 })
		uv.UvtMust(t, v.ln.Close())
		if err := uv.UvtRecv(t, errs, "Accept's end"); !errors.Is(err, net.ErrClosed) {
			t.Errorf("Accept waiting at Close = %v, want net.ErrClosed", err)
		}
		if _, err := v.ln.Accept(); !errors.Is(err, net.ErrClosed) {
			t.Errorf("Accept after Close = %v, want net.ErrClosed", err)
		}
		v.finish(t, c, s)
	})
}

// TestListenerEMFILE: with no descriptor left, a new connection waits in
// the kernel's backlog (none is dropped) while the listener reports the
// failed accept, a temporary error matching EMFILE, and pauses. The
// connections it has keep working, and once descriptors are free again
// it accepts the one that waited.
func TestListenerEMFILE(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		c, s := v.pair(t)
		cs := uv.UvtSubscribe(t, v.ln, v.u.Owner().Owned)
		uv.UvtMust(t, v.ln.Start())
		// The client's socket exists before the descriptors run out:
		// connecting it needs none.
		fd, err := uv.UvtSocket(unix.AF_INET, unix.SOCK_STREAM, 0)
		uv.UvtMust(t, err)
		defer unix.Close(fd)
		var old unix.Rlimit
		uv.UvtMust(t, unix.Getrlimit(unix.RLIMIT_NOFILE, &old))
		low := old
		low.Cur = min(old.Cur, 4096)
		uv.UvtMust(t, unix.Setrlimit(unix.RLIMIT_NOFILE, &low))
		settleCollections(t)
		give := useAllFDs(t)
		restored := false
		restore := func() {
			if !restored {
				restored = true
				give()
				unix.Setrlimit(unix.RLIMIT_NOFILE, &old)
			}
		}
		defer restore()
		port := v.ln.Addr().(*net.TCPAddr).Port
		uv.UvtMust(t, unix.Connect(fd, &unix.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}))
		call := cs.Next(t)
		var tmp interface{ Temporary() bool }
		if !errors.Is(call.Err, syscall.EMFILE) || !errors.As(call.Err, &tmp) || !tmp.Temporary() {
			t.Errorf("accept with no descriptor left: %v, %v; want a temporary error matching EMFILE", call.Result, call.Err)
		}
		// The connection held is still served.
		go io.Copy(s, s)
		if _, err := c.Write([]byte("ping")); err != nil {
			t.Fatal(err)
		}
		b := make([]byte, 4)
		if _, err := io.ReadFull(c, b); err != nil || string(b) != "ping" {
			t.Errorf("echo on the held connection = %q, %v", b, err)
		}
		restore()
		// Another error or two, one per pause, may come first.
		var x *uv.IO
		for x == nil {
			call = cs.Next(t)
			if x, _ = call.Result.(*uv.IO); x == nil && !errors.Is(call.Err, syscall.EMFILE) {
				t.Fatalf("after descriptors came back: %v, %v; want the connection that waited", call.Result, call.Err)
			}
		}
		defer x.Close()
		if _, err := unix.Write(fd, []byte("x")); err != nil {
			t.Fatal(err)
		}
		x.SetReadDeadline(time.Now().Add(uv.UvtSafety))
		if _, err := io.ReadFull(x, b[:1]); err != nil || b[0] != 'x' {
			t.Errorf("read on the connection that waited = %q, %v", b[:1], err)
		}
		c.Close()
		s.Close()
		v.ln.Close()
		v.stop()
		uv.UvtShutdown(t, v.u, true)
		// The reactor may say, rightly, that it could not watch its
		// loop's descriptor while none was left; nothing else.
		for _, rep := range v.u.Reports() {
			if !errors.Is(rep.Err, syscall.EMFILE) || !strings.Contains(rep.Msg, "loop's descriptor") {
				t.Errorf("unexpected report: %v", rep)
			}
		}
	})
}

// useAllFDs takes every descriptor the current limit allows and returns
// the function that gives them back.
// settleCollections runs the collector until the process's open
// descriptors stop changing: what earlier tests dropped without Close
// (reactors, their connections' lanes) is closed by cleanups, on their own
// goroutine, which would free a descriptor in the middle of a test that
// takes them all.
func settleCollections(t *testing.T) {
	t.Helper()
	prev := -1
	for range 50 {
		runtime.GC()
		time.Sleep(2 * time.Millisecond) // the cleanups' turn to run, not a verdict
		n := openFDs(t)
		if n == prev {
			return
		}
		prev = n
	}
}

func useAllFDs(t *testing.T) (release func()) {
	t.Helper()
	var fds []int
	for {
		fd, err := unix.Dup(0)
		if err != nil {
			if !errors.Is(err, syscall.EMFILE) {
				t.Fatalf("dup: %v", err)
			}
			break
		}
		fds = append(fds, fd)
	}
	return func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}
}

// TestIODroppedWithoutClose: listeners, connections, UDP sockets and pipes
// dropped without Close, under GOGC=10, are closed by the collector; no C
// handle (on the pure-Go driver, no descriptor) is left.
func TestIODroppedWithoutClose(t *testing.T) {
	defer debugGC(10)()
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		v.stop()
		base := handlesLeft(v.u)
		// The env's listener drops what it accepts; the dials' connections are
		// dropped too, once connected.
		_, err := event.Subscribe(v.ln, func(event.Event, any, error) {})
		uv.UvtMust(t, err)
		uv.UvtMust(t, v.ln.Start())
		func() {
			for range 20 {
				_, err := uv.Listen(v.u.Reactor, "tcp4", "127.0.0.1:0")
				uv.UvtMust(t, err)
				f, err := uv.DialAsync(v.u.Reactor, "tcp4", v.ln.Addr().String())
				uv.UvtMust(t, err)
				f.SetObject(nil)
				_, err = uv.ListenUDP(v.u.Reactor, "udp4", "127.0.0.1:0")
				uv.UvtMust(t, err)
				_, _, err = uv.Pipe(v.u.Reactor)
				uv.UvtMust(t, err)
			}
		}()
		uv.UvtCollectUntil(t, v.u, "the dropped listeners' and connections' handles", func() bool {
			return handlesLeft(v.u) == base
		})
		runtime.KeepAlive(v)
		v.ln.Close()
		uv.UvtShutdown(t, v.u, false)
	})
}

// On the pure-Go driver a Unix socket name beginning with '@' is in the
// abstract namespace (golang.org/x/sys/unix's convention, as package
// net's): nothing of it is on disk, so Close removes no file — not one of
// that name in the working directory.
func TestListenerAbstractUnlinksNothing(t *testing.T) {
	u := uv.UvtNewReactorOn(t, reactor.DriverGo)
	t.Chdir(t.TempDir())
	name := fmt.Sprintf("@uvevent-test-%d", os.Getpid())
	uv.UvtMust(t, os.WriteFile(name, []byte("not a socket"), 0o600))
	ln, err := uv.Listen(u.Reactor, "unix", name)
	uv.UvtMust(t, err)
	uv.UvtMust(t, ln.Close())
	if _, err := os.Stat(name); err != nil {
		t.Errorf("the file %s after closing the abstract socket's listener: %v", name, err)
	}
	uv.UvtShutdown(t, u, false)
}

// AcceptIO with a nil context is refused with ErrNilContext before it
// touches the listener: no panic, and no waiter left behind to swallow the
// next connection, which the next Accept gets. Both drivers.
func TestListenerAcceptIONilContextRefused(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		l, err := uv.Listen(u.Reactor, "tcp", "127.0.0.1:0")
		uv.UvtMust(t, err)
		var nilCtx context.Context // the bad input under test
		var got error
		if err := callBounded(func() { _, got = l.AcceptIO(nilCtx) }); err != nil {
			t.Fatalf("AcceptIO(nil): %v", err)
		}
		if !errors.Is(got, event.ErrNilContext) {
			t.Errorf("AcceptIO(nil) = %v, want ErrNilContext", got)
		}
		c, err := net.Dial("tcp", l.Addr().String())
		uv.UvtMust(t, err)
		defer c.Close()
		ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
		defer cancel()
		io, err := l.AcceptIO(ctx)
		if err != nil {
			t.Fatalf("AcceptIO after the refused one = %v, want the connection", err)
		}
		io.Close()
		l.Close()
		stop()
		uv.UvtShutdown(t, u, false)
	})
}

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
		// A dialed connection: one AcceptIO hands over reads nothing
		// ahead (its read lane is made), and this test needs the kept bytes.
		nl, err := net.Listen("tcp4", "127.0.0.1:0")
		uv.UvtMust(t, err)
		defer nl.Close()
		ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
		defer cancel()
		server, err := uv.Dial(ctx, u.Reactor, "tcp4", nl.Addr().String())
		uv.UvtMust(t, err)
		peer, err := nl.Accept()
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
		nl.Close()
		stop()
		uv.UvtShutdown(t, u, false)
		uv.UvtNoLeaks(t, base, fds)
	})
}

// dialN connects n plain clients to ln; the kernel completes them whether
// or not the listener accepts.
func dialN(t *testing.T, ln *uv.Listener, n int) []net.Conn {
	t.Helper()
	var cs []net.Conn
	for range n {
		c, err := net.Dial("tcp4", ln.Addr().String())
		uv.UvtMust(t, err)
		t.Cleanup(func() { c.Close() })
		cs = append(cs, c)
	}
	return cs
}

// TestListenerStopInCallback: connections waiting together; the
// callback that stops the listener on the first gets no other in that
// pass; the rest wait in the kernel's queue while stopped and come with
// the next Start. Stopped, with connections queued, the listener closes
// cleanly (the clients read the end of the stream).
func TestListenerStopInCallback(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		var got []*uv.IO // loop-owned
		first := make(chan struct{})
		_, err := event.Subscribe(v.ln, func(ev event.Event, res any, err error) {
			if c, ok := res.(*uv.IO); ok {
				got = append(got, c)
			}
			if len(got) == 1 && err == nil {
				uv.UvtMust(t, ev.Stop())
				close(first)
			}
		})
		uv.UvtMust(t, err)
		dialN(t, v.ln, 5) // all wait before the listener starts
		uv.UvtMust(t, v.ln.Start())
		uv.UvtRecv(t, first, "the first connection")
		dialN(t, v.ln, 2) // while stopped
		var n int
		uv.UvtMust(t, v.u.Call(func() { n = len(got) }))
		if n != 1 {
			t.Fatalf("%d connections accepted once stopped in the first callback, want 1", n)
		}
		uv.UvtMust(t, v.u.Call(func() {
			uv.UvtMust(t, v.ln.Start()) // the callback stops it again at once: len(got) > 1 now
		}))
		uv.UvtWaitFor(t, "the waiting connections", func() bool {
			v.u.Call(func() {
				n = len(got)
				if n < 7 && eventkind.LoopRefs(v.ln) == 0 {
					v.ln.Start()
				}
			})
			return n == 7
		})
		// Stopped again, with more waiting: Close drops them.
		uv.UvtMust(t, v.ln.Stop())
		late := dialN(t, v.ln, 2)
		uv.UvtMust(t, v.ln.Close())
		for _, c := range late {
			if n, err := c.Read(make([]byte, 1)); n != 0 || err == nil {
				t.Errorf("a client queued at the listener's Close read %d, %v; want its end", n, err)
			}
		}
		var closers []interface{ Close() error }
		uv.UvtMust(t, v.u.Call(func() {
			for _, c := range got {
				closers = append(closers, c)
			}
		}))
		v.finish(t, closers...)
	})
}

// TestListenerAcceptCancelled: an Accept whose context is cancelled, before
// or while it waits, returns the context's error and takes no connection:
// the next Accept gets the one that comes.
func TestListenerAcceptCancelled(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := v.ln.AcceptIO(ctx); !errors.Is(err, context.Canceled) {
			t.Errorf("AcceptIO with a cancelled context = %v, want context.Canceled", err)
		}
		ctx, cancel = context.WithCancel(context.Background())
		errs := make(chan error, 1)
		go func() {
			_, err := v.ln.AcceptIO(ctx)
			errs <- err
		}()
		uv.UvtWaitFor(t, "the Accept to start the listener", func() bool { return eventkind.LoopRefs(v.ln) > 0 })
		cancel()
		if err := uv.UvtRecv(t, errs, "the cancelled Accept"); err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("AcceptIO cancelled while waiting = %v, want context.Canceled", err)
		}
		clients := dialN(t, v.ln, 1)
		c, err := v.ln.AcceptIO(context.Background())
		uv.UvtMust(t, err)
		if _, err := clients[0].Write([]byte("k")); err != nil {
			t.Fatal(err)
		}
		if n, err := c.Read(make([]byte, 1)); n != 1 || err != nil {
			t.Errorf("Read on the connection accepted after the cancels = %d, %v", n, err)
		}
		v.finish(t, c)
	})
}

// TestListenerChurn: Stop and Start over and over from another
// goroutine while clients connect: every connection is accepted once,
// none dropped (each client reads the byte its server end writes).
func TestListenerChurn(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		const n = 200
		accepted := 0 // loop-owned
		_, err := event.Subscribe(v.ln, func(_ event.Event, res any, err error) {
			if c, ok := res.(*uv.IO); ok {
				accepted++
				c.Send([]byte{1})
				c.CloseWrite()
			}
		})
		uv.UvtMust(t, err)
		uv.UvtMust(t, v.ln.Start())
		done := make(chan error, 1)
		go func() {
			for range n {
				c, err := net.Dial("tcp4", v.ln.Addr().String())
				if err != nil {
					done <- err
					return
				}
				c.SetReadDeadline(time.Now().Add(uv.UvtSafety)) // a hang fails instead
				b := make([]byte, 2)
				k, _ := io.ReadFull(c, b[:1])
				c.Close()
				if k != 1 {
					done <- errors.New("a client was dropped: it read no byte")
					return
				}
			}
			done <- nil
		}()
		for churning := true; churning; {
			select {
			case err := <-done:
				uv.UvtMust(t, err)
				churning = false
			default:
				uv.UvtMust(t, v.ln.Stop())
				uv.UvtMust(t, v.ln.Start())
			}
		}
		uv.UvtMust(t, v.u.Call(func() {
			if accepted != n {
				t.Errorf("%d connections accepted, want %d", accepted, n)
			}
		}))
		v.finish(t)
	})
}

// A reactor dropped without Close while it holds a listener that has
// accepted (on the libuv driver the shim then keeps a spare handle for the
// next connection) is collected, and frees the listener's socket: the
// descriptor count comes back, and nothing listens on the old address any
// more. Half the listeners are stopped and dropped; the other half are
// closed by their callback while a second connection accepted in the same
// turn is still to be handed over (on the libuv driver, a record whose
// connection nobody took, released by the loop of the dropped reactor).
//
// The listeners are stopped or closed before the drop: a reactor with a
// started event is not collected (see TestReactorDroppedWithAStartedHandle).
func TestReactorDroppedWithAListener(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		var addrs []string
		collectDropped(t, 10, func(i int32, collected *atomic.Int32) {
			addrs = append(addrs, dropListeningReactor(t, d, i%2 == 1, collected))
		})
		for _, a := range addrs {
			c, err := net.Dial("tcp4", a)
			if err == nil {
				c.Close()
				t.Errorf("dial %s after the reactor was collected: connected, want ECONNREFUSED", a)
			} else if !errors.Is(err, syscall.ECONNREFUSED) {
				t.Errorf("dial %s after the reactor was collected: %v, want ECONNREFUSED", a, err)
			}
		}
	})
}

// dropListeningReactor makes a reactor whose listener accepts a connection
// (two waiting, if closeInCallback: the callback closes the listener at the
// first), stops it, and drops both; it returns the listener's address.
func dropListeningReactor(t *testing.T, d reactor.Driver, closeInCallback bool, collected *atomic.Int32) string {
	t.Helper()
	r, err := reactor.New(reactor.Options{Driver: d}) // dropped, not closed: no helper may hold it
	uv.UvtMust(t, err)
	runtime.AddCleanup(r, func(c *atomic.Int32) { c.Add(1) }, collected)
	ln, err := uv.Listen(r, "tcp4", "127.0.0.1:0")
	uv.UvtMust(t, err)
	addr := ln.Addr().String()
	accepted := 0
	_, err = event.Subscribe(ln, func(ev event.Event, res any, err error) {
		if c, ok := res.(*uv.IO); ok && err == nil {
			accepted++
			c.Close()
			if closeInCallback {
				ev.Close()
			}
		}
	})
	uv.UvtMust(t, err)
	uv.UvtMust(t, ln.Start())
	dials := 1
	if closeInCallback {
		dials = 2
	}
	for range dials {
		c, err := net.Dial("tcp4", addr) // connected once in the backlog
		uv.UvtMust(t, err)
		defer c.Close()
	}
	turnUntil(t, r, func() bool { return accepted > 0 })
	if !closeInCallback {
		uv.UvtMust(t, ln.Stop())
	}
	return addr
}

// turnUntil turns r until cond holds. It takes the reactor itself, not a
// test helper that would hold it, so that the reactor may be collected once
// the caller drops it.
func turnUntil(t *testing.T, r *reactor.Reactor, cond func() bool) {
	t.Helper()
	for !cond() {
		ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
		err := r.RunOnce(ctx)
		cancel()
		uv.UvtMust(t, err)
	}
}

// TestReactorDroppedWithAnOnAcceptCallback: a reactor dropped with a
// stopped listener whose callback was added with OnAccept (event.On) is
// collected as one with a Subscribe callback is: On's callback does not
// hold the listener, and still delivers the accepted connection (the
// listener's notifications name the driver's event behind it, not the
// listener).
func TestReactorDroppedWithAnOnAcceptCallback(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		collectDropped(t, 4, func(_ int32, collected *atomic.Int32) {
			r, err := reactor.New(reactor.Options{Driver: d}) // dropped, not closed: no helper may hold it
			uv.UvtMust(t, err)
			runtime.AddCleanup(r, func(c *atomic.Int32) { c.Add(1) }, collected)
			ln, err := uv.Listen(r, "tcp4", "127.0.0.1:0")
			uv.UvtMust(t, err)
			accepted := 0
			_, err = ln.OnAccept(func(c *uv.IO, err error) {
				if err == nil {
					if c == nil {
						t.Error("OnAccept delivered no connection")
					} else {
						c.Close()
					}
					accepted++
				}
			})
			uv.UvtMust(t, err)
			uv.UvtMust(t, ln.Start())
			c, err := net.Dial("tcp4", ln.Addr().String())
			uv.UvtMust(t, err)
			defer c.Close()
			turnUntil(t, r, func() bool { return accepted > 0 })
			uv.UvtMust(t, ln.Stop())
		})
	})
}

// Descriptors exhausted under a listener, with connections waiting and
// another goroutine taking each descriptor freed (as a busy program's
// other threads do; it would take the one libuv keeps in reserve): the
// listener reports one temporary error matching EMFILE per pause, its
// pauses doubling from 5 ms (http.Server's backoff), and does not spin.
// The counts decide it, not time: accept attempts equal the errors
// reported, the loop turns a bounded number of times per pause, and
// memory stays flat. Once descriptors are back, the connections that
// waited are accepted. Through OnAccept, through AcceptIO and under
// http.Serve (which backs off and goes on), on both drivers, in a child process (this test binary again) whose lowered
// RLIMIT_NOFILE touches nothing else.
func TestListenerExhaustedPauses(t *testing.T) {
	if inChild(t, "UVEVENT_ACCEPT_EMFILE_CHILD") {
		conform.EachDriver(t, exhaustedListenerChild)
	}
}

// inChild reports whether this process is the child that runs t (env set
// to 1); in the parent it runs this test binary again as that child, for t
// alone, and fails t unless the child passes.
func inChild(t *testing.T, env string) bool {
	if os.Getenv(env) == "1" {
		return true
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), env+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if !bytes.Contains(out, []byte("--- PASS")) {
		t.Fatalf("child did not pass:\n%s", out)
	}
	t.Logf("child:\n%s", bytes.TrimSpace(out))
	return false
}

// exhaustionPauses is how many failed accepts (pauses) each path sees:
// 5+10+20+40+80 ms of pauses before the last.
const exhaustionPauses = 6

func exhaustedListenerChild(t *testing.T, d reactor.Driver) {
	u := uv.UvtNewReactorOn(t, d)
	stop := uv.UvtServe(t, u)
	defer stop()
	// Three listeners, not started, each with two connections waiting.
	var lns [3]*uv.Listener
	var peers [3][]net.Conn
	for i := range lns {
		ln, err := uv.Listen(u.Reactor, "tcp4", "127.0.0.1:0")
		uv.UvtMust(t, err)
		defer ln.Close()
		lns[i] = ln
		for range 2 {
			c, err := net.Dial("tcp4", ln.Addr().String())
			uv.UvtMust(t, err)
			defer c.Close()
			peers[i] = append(peers[i], c)
		}
	}
	release := starveDescriptors(t)
	defer release()
	rss0 := residentBytes(t)
	turns0 := u.Stats().Iterations

	// OnAccept: the callback stops the listener at the last error it
	// waits for, so that the count of failed accepts is final.
	errs := make(chan error, exhaustionPauses)
	conns := make(chan *uv.IO, 2)
	n := 0
	event.Subscribe(lns[0], func(ev event.Event, res any, err error) {
		switch c, _ := res.(*uv.IO); {
		case c != nil:
			conns <- c
		case err != nil && n < exhaustionPauses:
			if n++; n == exhaustionPauses {
				ev.Stop()
			}
			errs <- err
		}
	})
	uv.UvtMust(t, lns[0].Start())
	var pauses []time.Duration
	for range exhaustionPauses {
		err := uv.UvtRecv(t, errs, "an accept error")
		checkAcceptExhausted(t, err)
		pauses = append(pauses, uv.UvtAcceptPause(err))
	}
	want := []time.Duration{5e6, 10e6, 20e6, 40e6, 80e6, 160e6}
	if !slices.Equal(pauses, want) {
		t.Errorf("OnAccept's pauses = %v, want %v", pauses, want)
	}
	if accepted, failed := uv.UvtAcceptCounts(lns[0]); accepted != 0 || failed != exhaustionPauses {
		t.Errorf("OnAccept: %d accepted, %d accepts failed; want 0 and %d (one per pause)", accepted, failed, exhaustionPauses)
	}

	// AcceptIO returns the error, as net.Listener's Accept does.
	ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
	defer cancel()
	var last time.Duration
	for i := range exhaustionPauses {
		_, err := lns[1].AcceptIO(ctx)
		checkAcceptExhausted(t, err)
		// An error nobody waited for (between two AcceptIO) may have
		// doubled the pause once more: never shorter, never past 1 s.
		if p := uv.UvtAcceptPause(err); p < last || p > time.Second || i == 0 && p != 5e6 {
			t.Errorf("AcceptIO error %d paused %v after %v", i, p, last)
		} else {
			last = p
		}
	}
	_, failed := uv.UvtAcceptCounts(lns[1])

	// http.Serve over the listener backs off and goes on: one log line per
	// error Accept returned, and Serve does not return.
	logged := make(chan string, 64)
	srv := &http.Server{
		Handler:  http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") }),
		ErrorLog: log.New(lineSink(logged), "", 0),
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(lns[2]) }()
	defer srv.Close()
	for range 3 {
		if line := uv.UvtRecv(t, logged, "http.Serve's accept error"); !strings.Contains(line, "too many open files") {
			t.Errorf("http.Serve logged %q, want an accept error it retries", line)
		}
	}
	select {
	case err := <-served:
		t.Fatalf("http.Serve returned with descriptors exhausted: %v", err)
	default:
	}
	turns := u.Stats().Iterations - turns0
	rss := residentBytes(t)
	_, failedHTTP := uv.UvtAcceptCounts(lns[2])
	t.Logf("%s: %d loop turns, %d+%d+%d failed accepts (OnAccept, AcceptIO, http.Serve), peak RSS %d -> %d KiB", d, turns, exhaustionPauses, failed, failedHTTP, rss0>>10, rss>>10)
	// A turn per pause's end, per AcceptIO's Call and per error; a spin is
	// thousands.
	failed += failedHTTP
	if limit := 8*(2*exhaustionPauses+failed) + 64; turns > limit {
		t.Errorf("%d loop turns for %d failed accepts, want at most %d", turns, exhaustionPauses+failed, limit)
	}
	if grew := rss - rss0; rss > rss0 && grew > 32<<20 {
		t.Errorf("resident memory grew by %d KiB while descriptors were exhausted", grew>>10)
	}

	// Descriptors back: the connections that waited are accepted.
	release()
	uv.UvtMust(t, lns[0].Start())
	for i := range 2 {
		c := uv.UvtRecv(t, conns, "a connection that waited, through OnAccept")
		defer c.Close()
		echoByte(t, peers[0][i], c)
	}
	for i := range 2 {
		var c *uv.IO
		for c == nil {
			var err error
			if c, err = lns[1].AcceptIO(ctx); err != nil && !errors.Is(err, syscall.EMFILE) {
				t.Fatalf("AcceptIO once descriptors are back: %v", err)
			}
		}
		defer c.Close()
		echoByte(t, peers[1][i], c)
	}
	resp, err := http.Get("http://" + lns[2].Addr().String() + "/")
	if err != nil {
		t.Fatalf("GET through http.Serve once descriptors are back: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(body) != "ok" {
		t.Errorf("GET through http.Serve = %s %q", resp.Status, body)
	}
}

// lineSink sends what is written to it (a log line each) on ch, dropping
// what ch has no room for.
type lineSink chan string

func (s lineSink) Write(p []byte) (int, error) {
	select {
	case s <- string(p):
	default:
	}
	return len(p), nil
}

// checkAcceptExhausted fails t unless err is the temporary error of an
// accept that found no descriptor.
func checkAcceptExhausted(t *testing.T, err error) {
	t.Helper()
	var ne net.Error
	var tmp interface{ Temporary() bool }
	if !errors.Is(err, syscall.EMFILE) && !errors.Is(err, syscall.ENFILE) || !errors.As(err, &ne) || !errors.As(err, &tmp) || !tmp.Temporary() {
		t.Fatalf("accept with no descriptor = %v; want a temporary net.Error matching EMFILE", err)
	}
}

// starveDescriptors lowers RLIMIT_NOFILE to a few above what is open,
// takes every descriptor left, and keeps a goroutine taking each one
// freed; release ends it all (and is idempotent), failing t when one of
// the descriptors taken was closed (or replaced) by anyone else meanwhile.
func starveDescriptors(t *testing.T) (release func()) {
	var old syscall.Rlimit
	uv.UvtMust(t, syscall.Getrlimit(syscall.RLIMIT_NOFILE, &old))
	lim := old
	uv.UvtSetRlimitCur(&lim.Cur, uv.UvtOpenFDs(t)+16)
	uv.UvtMust(t, syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim))
	var null syscall.Stat_t
	uv.UvtMust(t, syscall.Stat("/dev/null", &null))
	var mu sync.Mutex
	var hog []int
	take := func() bool {
		fd, err := syscall.Open("/dev/null", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != nil {
			return false
		}
		mu.Lock()
		hog = append(hog, fd)
		mu.Unlock()
		return true
	}
	for take() {
	}
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() { // the thief: a descriptor freed is taken within 50 µs
		defer close(stopped)
		for {
			select {
			case <-done:
				return
			default:
			}
			if !take() {
				time.Sleep(50 * time.Microsecond)
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(done)
			<-stopped
			mu.Lock()
			var bad []int
			for _, fd := range hog {
				var st syscall.Stat_t
				if err := syscall.Fstat(fd, &st); err != nil || st.Dev != null.Dev || st.Ino != null.Ino {
					bad = append(bad, fd) // closed by someone else, perhaps reused
				}
				syscall.Close(fd)
			}
			hog = nil
			mu.Unlock()
			syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old)
			if len(bad) > 0 {
				t.Errorf("descriptors the thief held, closed or replaced meanwhile: %v", bad)
			}
		})
	}
}

// residentBytes is the process's peak resident set (getrusage: no
// descriptor needed).
func residentBytes(t *testing.T) uint64 {
	var ru syscall.Rusage
	uv.UvtMust(t, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return uint64(ru.Maxrss) << 10
}

// echoByte sends a byte from peer and reads it on c.
func echoByte(t *testing.T, peer net.Conn, c *uv.IO) {
	t.Helper()
	if _, err := peer.Write([]byte("e")); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 1)
	c.SetReadDeadline(time.Now().Add(uv.UvtSafety))
	if _, err := io.ReadFull(c, b); err != nil || b[0] != 'e' {
		t.Errorf("read on an accepted connection = %q, %v", b, err)
	}
}

// injectInitFault makes the libuv driver's next handle init fail with
// errno: set by listener_fault_uvfaults_test.go in builds with the shim's
// fault switch (build tag uvfaults), nil otherwise.
var injectInitFault func(errno syscall.Errno)

// One failed accept does not stop a listener: with two connections waiting,
// the accept fails once with ENOMEM; the listener reports it (a temporary
// error), pauses, and then accepts both, through OnAccept and through
// AcceptIO. On the libuv driver the fault is the shim's uv_pipe_init for
// the connection's handle of a Unix listener (made before accept(2), so
// the connection stays in the backlog; a TCP connection is accepted with
// no handle to init, left unopened in libuv); the pure-Go driver has no
// handle to init, and its fault is accept(2) itself failing.
func TestListenerGoesOnAfterFailedAccept(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		inject := func() { uv.UvtFailAccepts(t, syscall.ENOMEM, 1) }
		network := "tcp4"
		if d == reactor.DriverLibuv {
			if injectInitFault == nil {
				t.Skip("the libuv driver's failed init needs the shim's fault switch: build tag uvfaults (make stress runs it)")
			}
			inject = func() { injectInitFault(syscall.ENOMEM) }
			network = "unix"
		}
		for _, path := range []string{"OnAccept", "AcceptIO"} {
			t.Run(path, func(t *testing.T) {
				u := uv.UvtNewReactorOn(t, d)
				stop := uv.UvtServe(t, u)
				defer stop()
				addr := "127.0.0.1:0"
				if network == "unix" {
					addr = filepath.Join(t.TempDir(), "l.sock")
				}
				ln, err := uv.Listen(u.Reactor, network, addr)
				uv.UvtMust(t, err)
				defer ln.Close()
				var peers []net.Conn
				for range 2 {
					c, err := net.Dial(network, ln.Addr().String()) // in the backlog once Dial returns
					uv.UvtMust(t, err)
					defer c.Close()
					peers = append(peers, c)
				}
				inject()
				var got []*uv.IO
				var failure error
				if path == "OnAccept" {
					cs := uv.UvtSubscribe(t, ln, u.Owner().Owned)
					uv.UvtMust(t, ln.Start())
					failure = cs.Next(t).Err
					for range 2 {
						call := cs.Next(t)
						c, ok := call.Result.(*uv.IO)
						if !ok {
							t.Fatalf("after the failed accept: %v, %v; want a connection", call.Result, call.Err)
						}
						got = append(got, c)
					}
				} else {
					ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
					defer cancel()
					_, failure = ln.AcceptIO(ctx)
					for range 2 {
						c, err := ln.AcceptIO(ctx)
						if err != nil {
							t.Fatalf("AcceptIO after the failed accept: %v", err)
						}
						got = append(got, c)
					}
				}
				var tmp interface{ Temporary() bool }
				if !errors.Is(failure, syscall.ENOMEM) || !errors.As(failure, &tmp) || !tmp.Temporary() || uv.UvtAcceptPause(failure) != 5*time.Millisecond {
					t.Errorf("the failed accept = %v; want a temporary error matching ENOMEM, pausing 5ms", failure)
				}
				// Each connection is a peer's, in order, and carries bytes.
				for i, c := range got {
					defer c.Close()
					if _, err := peers[i].Write([]byte{byte('a' + i)}); err != nil {
						t.Fatal(err)
					}
					b := make([]byte, 1)
					c.SetReadDeadline(time.Now().Add(uv.UvtSafety))
					if _, err := io.ReadFull(c, b); err != nil || b[0] != byte('a'+i) {
						t.Errorf("connection %d read %q, %v; want %q", i, b, err, 'a'+i)
					}
				}
				accepted, failed := uv.UvtAcceptCounts(ln)
				if diff := cmp.Diff([2]uint64{2, 1}, [2]uint64{accepted, failed}); diff != "" {
					t.Errorf("accepted and failed (-want +got):\n%s", diff)
				}
			})
		}
	})
}

// TestAcceptIOReadyForBlocking: a connection taken by AcceptIO (or
// Accept) has its read lane made and its write lane in use when it is
// handed over, so its first Read and first Write go to the socket from the
// caller's goroutine: nothing is queued to the loop for them, on either
// driver.
func TestAcceptIOReadyForBlocking(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		v := newIOEnv(t, d, "tcp4")
		c, s := v.pair(t) // s came from AcceptIO
		before := v.u.Reactor.Stats().Queued
		_, err := c.Write([]byte("ping"))
		uv.UvtMust(t, err)
		if b := readN(t, s, 4); string(b) != "ping" {
			t.Fatalf("read %q, want %q", b, "ping")
		}
		_, err = s.Write([]byte("pong"))
		uv.UvtMust(t, err)
		if q := v.u.Reactor.Stats().Queued - before; q > 2 {
			t.Errorf("%d operations queued to the loop for an accepted connection's first Read and Write (and the client's first Write), want none but the Stats call's", q)
		}
		if b := readN(t, c, 4); string(b) != "pong" {
			t.Fatalf("read %q, want %q", b, "pong")
		}
		v.finish(t, c, s)
	})
}
