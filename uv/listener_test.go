package uv_test

import (
	"errors"
	"io"
	"net"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/eventkind"
	"github.com/uvevent/uvevent/uv"
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
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		uv.UvtMust(t, err)
		defer unix.Close(fd)
		var old unix.Rlimit
		uv.UvtMust(t, unix.Getrlimit(unix.RLIMIT_NOFILE, &old))
		low := old
		low.Cur = min(old.Cur, 4096)
		uv.UvtMust(t, unix.Setrlimit(unix.RLIMIT_NOFILE, &low))
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
