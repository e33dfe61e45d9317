package uv_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/uv"
)

// TestDialFailureClosesIO: a Dial that fails (a refused port, a
// socket path that does not exist, a path that is no socket) returns only
// the error, so nobody can close the IO it had begun: it must close
// itself, not hold its handle and descriptor until the collector runs.
func TestDialFailureClosesIO(t *testing.T) {
	defer debugGC(-1)()
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		ln, err := uv.Listen(u.Reactor, "tcp4", "127.0.0.1:0")
		uv.UvtMust(t, err)
		closedPort := ln.Addr().String()
		uv.UvtMust(t, ln.Close())
		dir := t.TempDir()
		notSocket := filepath.Join(dir, "file")
		uv.UvtMust(t, os.WriteFile(notSocket, nil, 0o600))
		uv.UvtWaitFor(t, "the listener's handle to go", func() bool { return handlesLeft(u) == 0 })
		// libuv opens a descriptor of its own, kept by the loop, with a
		// loop's first stream handle: a dial's, here.
		uv.Dial(context.Background(), u.Reactor, "tcp4", closedPort)
		uv.UvtWaitFor(t, "the first dial's handle to go", func() bool { return handlesLeft(u) == 0 })
		fds := uv.UvtOpenFDs(t)
		for _, tc := range []struct {
			network, addr string
			want          error
		}{
			{"tcp4", closedPort, syscall.ECONNREFUSED},
			{"unix", filepath.Join(dir, "nobody"), syscall.ENOENT},
			{"unix", notSocket, syscall.ECONNREFUSED},
		} {
			_, err := uv.Dial(context.Background(), u.Reactor, tc.network, tc.addr)
			if !errors.Is(err, tc.want) {
				t.Errorf("Dial(%s, %s) = %v, want %v", tc.network, tc.addr, err, tc.want)
			}
			// Closed by now, or (libuv) on the next turn; the collector,
			// kept from running, closes nothing meanwhile.
			uv.UvtWaitFor(t, "the failed dial's IO to close", func() bool { return u.Stats().Handles["io"] == 0 })
		}
		// An async dial's future tells the same, with the IO closed.
		f, err := uv.DialAsync(u.Reactor, "tcp4", closedPort)
		uv.UvtMust(t, err)
		if _, err := event.AwaitValue[*uv.IO](context.Background(), f); !errors.Is(err, syscall.ECONNREFUSED) {
			t.Errorf("DialAsync to a closed port: %v, want ECONNREFUSED", err)
		}
		// C handles close on the next turn of libuv: wait for it.
		uv.UvtWaitFor(t, "the failed dials' handles to go", func() bool { return handlesLeft(u) == 0 })
		if got := uv.UvtOpenFDs(t); got > fds {
			t.Errorf("%d descriptors open after the failed dials, want at most %d", got, fds)
		}
		stop()
		uv.UvtShutdown(t, u, false)
	})
}

// synSent counts the sockets of this machine connecting (SYN-SENT, in
// /proc/net/tcp) to port on 127.0.0.1: a connect still in flight.
func synSent(t *testing.T, port int) int {
	t.Helper()
	b, err := os.ReadFile("/proc/net/tcp")
	uv.UvtMust(t, err)
	want := fmt.Sprintf("0100007F:%04X", port)
	n := 0
	for _, line := range strings.Split(string(b), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) > 3 && f[2] == want && f[3] == "02" {
			n++
		}
	}
	return n
}

// heldDial readies what must be abandoned: the address of a listener
// whose queue is full (the kernel drops a SYN until the queue has room, so
// a connect stays in flight), its port, and the sockets open before the
// connect.
func heldDial(t *testing.T) (addr string, port, fds int) {
	t.Helper()
	addr, _, first := heldConnect(t)
	port = first.RemoteAddr().(*net.TCPAddr).Port
	return addr, port, openSockets(t)
}

// openSockets counts the process's open socket descriptors.
func openSockets(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	uv.UvtMust(t, err)
	n := 0
	for _, e := range ents {
		if target, _ := os.Readlink("/proc/self/fd/" + e.Name()); strings.HasPrefix(target, "socket:") {
			n++
		}
	}
	return n
}

// overAtOnce checks that an abandoned connect is over when its Dial returns
// (or its future's Close does): no socket connecting, none left open,
// nothing active; its handle goes on the next turn.
func overAtOnce(t *testing.T, u *uv.UvtReactor, port, fds int) {
	t.Helper()
	if n := synSent(t, port); n != 0 {
		t.Errorf("%d sockets still connecting after the dial was abandoned, want 0", n)
	}
	if got := openSockets(t); got != fds {
		t.Errorf("%d sockets open after the dial was abandoned, want %d", got, fds)
	}
	if a := u.Stats().Active; a != 0 {
		t.Errorf("Stats().Active = %d after the dial was abandoned, want 0", a)
	}
	uv.UvtWaitFor(t, "the abandoned connect's handle to go", func() bool { return handlesLeft(u) == 0 })
}

// TestDialAbandoned: a Dial whose context ends while the connect is in
// flight returns the context's error, and the connect is over by then: its
// socket is closed (no SYN is sent again when the peer's queue frees), as
// net.Dialer's is.
func TestDialAbandoned(t *testing.T) {
	defer debugGC(-1)()
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		addr, port, fds := heldDial(t)
		// The context ends once the connect is in flight (its IO counted):
		// a context ended before the call starts no connect at all.
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			for synSent(t, port) == 0 {
				runtime.Gosched()
			}
			cancel()
		}()
		if _, err := uv.Dial(ctx, u.Reactor, "tcp4", addr); !errors.Is(err, context.Canceled) {
			t.Fatalf("Dial with its connect held in flight and a cancelled context = %v, want context.Canceled", err)
		}
		overAtOnce(t, u, port, fds)
		stop()
		uv.UvtShutdown(t, u, false)
	})
}

// TestDialFutureClosed: closing a DialAsync future while its connect is in
// flight closes the connect's socket at once: the future says it is closed
// (not pending), nothing is active, and Run, which the connect kept going,
// ends. The collector is kept from running: nothing waits for it.
func TestDialFutureClosed(t *testing.T) {
	defer debugGC(-1)()
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		addr, port, fds := heldDial(t)
		f, err := uv.DialAsync(u.Reactor, "tcp4", addr)
		uv.UvtMust(t, err)
		if !u.Alive() {
			t.Fatal("a reactor with a connect in flight is not alive")
		}
		uv.UvtWaitFor(t, "the connect to be in flight", func() bool { return synSent(t, port) == 1 })
		uv.UvtMust(t, f.Close())
		if info := f.Info(); info != "Future(closed)" {
			t.Errorf("Info of the closed dial's future = %q, want Future(closed)", info)
		}
		ran := make(chan error, 1)
		go func() { ran <- u.Run(context.Background()) }()
		if err := uv.UvtRecv(t, ran, "the end of Run"); err != nil {
			t.Errorf("Run = %v", err)
		}
		overAtOnce(t, u, port, fds)
		if _, ok, _ := f.Outcome(); ok {
			t.Error("the closed dial's future completed")
		}
		uv.UvtShutdown(t, u, false)
	})
}

// TestDialFutureClosedAfterConnect: a DialAsync future closed after its
// connect completed keeps its outcome (the IO, for Outcome), as any
// future's: the IO is the program's to close.
func TestDialFutureClosedAfterConnect(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		f, err := uv.DialAsync(v.u.Reactor, "tcp4", v.ln.Addr().String())
		uv.UvtMust(t, err)
		c, err := event.AwaitValue[*uv.IO](context.Background(), f)
		uv.UvtMust(t, err)
		uv.UvtMust(t, f.Close())
		s, err := v.ln.AcceptIO(context.Background())
		uv.UvtMust(t, err)
		uv.UvtMust(t, c.Send([]byte("x")))
		b := make([]byte, 1)
		if n, err := s.Read(b); n != 1 || err != nil {
			t.Errorf("server read %d, %v from the dialled IO, want 1 byte", n, err)
		}
		uv.UvtMust(t, c.Close())
		v.finish(t, s)
	})
}

// TestDialUnixQueueFull: a Unix socket's listen queue full (the
// listener stopped, its backlog taken), a Dial is refused at once with
// EAGAIN on both drivers (libuv's uv_pipe_connect, like connect(2), does
// not wait), and its IO is closed.
func TestDialUnixQueueFull(t *testing.T) {
	defer debugGC(-1)()
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		path := filepath.Join(t.TempDir(), "sock")
		ln, err := uv.ListenConfig{Backlog: 1}.Listen(u.Reactor, "unix", path)
		uv.UvtMust(t, err)
		var held []*uv.IO
		for {
			c, err := uv.Dial(context.Background(), u.Reactor, "unix", path)
			if err != nil {
				if !errors.Is(err, syscall.EAGAIN) {
					t.Errorf("Dial to a full queue = %v, want EAGAIN", err)
				}
				break
			}
			held = append(held, c)
			if len(held) > 16 {
				t.Fatal("16 connections queued with a backlog of 1")
			}
		}
		uv.UvtWaitFor(t, "the refused dial's IO to close", func() bool { return u.Stats().Handles["io"] == len(held) })
		for _, c := range held {
			uv.UvtMust(t, c.Close())
		}
		uv.UvtMust(t, ln.Close())
		stop()
		uv.UvtShutdown(t, u, false)
	})
}
