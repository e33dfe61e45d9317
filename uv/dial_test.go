package uv_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// dualNameserver is a nameserver on 127.0.0.1 that gives every name ::1
// (AAAA) and 127.0.0.1 (A): the dual-stack answer /etc/hosts here does
// not give localhost. asked counts the queries.
type dualNameserver struct {
	conn  net.PacketConn
	asked atomic.Int32
}

func newDualNameserver(t *testing.T) *dualNameserver {
	c, err := net.ListenPacket("udp4", "127.0.0.1:0")
	uv.UvtMust(t, err)
	s := &dualNameserver{conn: c}
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := c.ReadFrom(buf)
			if err != nil {
				return // closed at cleanup
			}
			s.asked.Add(1)
			if resp := dualAnswer(buf[:n]); resp != nil {
				c.WriteTo(resp, from)
			}
		}
	}()
	t.Cleanup(func() { c.Close() })
	return s
}

// dualAnswer answers a query for an A or AAAA record with the loopback
// address of that family (other types get no record).
func dualAnswer(q []byte) []byte {
	if len(q) < 12 {
		return nil
	}
	end := 12
	for end < len(q) && q[end] != 0 {
		end += int(q[end]) + 1
	}
	end += 5 // the root label, the type and the class
	if end > len(q) {
		return nil
	}
	qtype := binary.BigEndian.Uint16(q[end-4:])
	var rdata []byte
	switch qtype {
	case 1:
		rdata = []byte{127, 0, 0, 1}
	case 28:
		a := netip.IPv6Loopback().As16()
		rdata = a[:]
	}
	resp := append([]byte{}, q[:end]...)
	binary.BigEndian.PutUint16(resp[2:], 0x8180) // a response, recursion available, no error
	binary.BigEndian.PutUint16(resp[4:], 1)
	binary.BigEndian.PutUint16(resp[8:], 0)
	binary.BigEndian.PutUint16(resp[10:], 0)
	if rdata == nil {
		binary.BigEndian.PutUint16(resp[6:], 0)
		return resp
	}
	binary.BigEndian.PutUint16(resp[6:], 1)
	rr := []byte{0xc0, 12, 0, byte(qtype), 0, 1, 0, 0, 0, 60, 0, byte(len(rdata))}
	return append(append(resp, rr...), rdata...)
}

// nameserverResolver is a Go resolver whose every query goes to addr, and
// that counts the connections it makes.
func nameserverResolver(addr net.Addr, dials *atomic.Int32) *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		dials.Add(1)
		var d net.Dialer
		return d.DialContext(ctx, "udp4", addr.String())
	}}
}

// listenOn listens on one loopback address only and accepts every
// connection, until the test ends.
func listenOn(t *testing.T, network, addr string) int {
	l, err := net.Listen(network, addr)
	if err != nil {
		t.Fatalf("listen %s %s: %v", network, addr, err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	return l.Addr().(*net.TCPAddr).Port
}

// A name with an IPv6 and an IPv4 address connects whichever of them
// listens: every address the resolver gives is tried, each family in
// its turn (with a fallback delay, or at once when the first family has
// failed), whatever the resolver's order.
func TestDialerTriesEveryAddress(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		ns := newDualNameserver(t)
		var dials atomic.Int32
		stop := uv.UvtServe(t, u)
		defer stop()
		for _, only := range []struct{ network, addr, want string }{
			{"tcp4", "127.0.0.1:0", "127.0.0.1"},
			{"tcp6", "[::1]:0", "::1"},
		} {
			port := listenOn(t, only.network, only.addr)
			for _, delay := range []time.Duration{0, time.Hour, -1} {
				d := uv.Dialer{Reactor: u.Reactor, Resolver: nameserverResolver(ns.conn.LocalAddr(), &dials), FallbackDelay: delay}
				c, err := d.DialContext(waitCtx(t), "tcp", net.JoinHostPort("dual.test.", strconv.Itoa(port)))
				if err != nil {
					t.Errorf("only %s listens, fallback delay %v: %v", only.want, delay, err)
					continue
				}
				if got := c.RemoteAddr().(*net.TCPAddr).IP.String(); got != only.want {
					t.Errorf("only %s listens: connected to %s", only.want, got)
				}
				c.Close()
			}
		}
		if dials.Load() == 0 {
			t.Errorf("the name never reached the resolver")
		}
		// tcp4 and tcp6 take only their family's address.
		port := listenOn(t, "tcp6", "[::1]:0")
		d := uv.Dialer{Reactor: u.Reactor, Resolver: nameserverResolver(ns.conn.LocalAddr(), &dials)}
		if c, err := d.DialContext(waitCtx(t), "tcp4", net.JoinHostPort("dual.test.", strconv.Itoa(port))); err == nil {
			t.Errorf("tcp4 connected to %v, where only ::1 listens", c.RemoteAddr())
			c.Close()
		}
		c, err := d.DialContext(waitCtx(t), "tcp6", net.JoinHostPort("dual.test.", strconv.Itoa(port)))
		uv.UvtMust(t, err)
		c.Close()
		stop()
		uv.UvtShutdown(t, u, false)
	})
}

// A literal address is never sent to a resolver, and a name is resolved
// within the dial's context: a resolver hung on a nameserver that never
// answers gives way when the context ends, and so does a Dialer's Timeout.
func TestDialerResolvesOnlyNamesWithinContext(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		ns := newSilentNameserver(t)
		var dials atomic.Int32
		rs := nameserverResolver(ns.conn.LocalAddr(), &dials)
		stop := uv.UvtServe(t, u)
		defer stop()
		port4, port6 := listenOn(t, "tcp4", "127.0.0.1:0"), listenOn(t, "tcp6", "[::1]:0")
		d := uv.Dialer{Reactor: u.Reactor, Resolver: rs}
		for _, addr := range []string{"127.0.0.1:" + strconv.Itoa(port4), "[::1]:" + strconv.Itoa(port6)} {
			c, err := d.DialContext(waitCtx(t), "tcp", addr)
			if err != nil {
				t.Errorf("dial %s: %v", addr, err)
				continue
			}
			c.Close()
		}
		if n := dials.Load(); n != 0 {
			t.Errorf("literal addresses reached the resolver %d times", n)
		}

		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := d.DialContext(ctx, "tcp", "hung.invalid.:80")
			done <- err
		}()
		uv.UvtRecv(t, ns.queries, "the name's query reaching the silent nameserver")
		cancel()
		if err := uv.UvtRecv(t, done, "the dial to return"); !errors.Is(err, context.Canceled) {
			t.Errorf("dial of a hung name whose context was cancelled: %v, want context.Canceled", err)
		}
		d.Timeout = time.Millisecond
		if _, err := d.DialContext(waitCtx(t), "tcp", "hung2.invalid.:80"); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("dial of a hung name past the Dialer's Timeout: %v, want context.DeadlineExceeded", err)
		}
		stop()
		uv.UvtShutdown(t, u, false)
	})
}

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
	// At most as many as before: a socket of another test may close
	// meanwhile (one lingering, or collected), which is no leak of this one.
	if got := openSockets(t); got > fds {
		t.Errorf("%d sockets open after the dial was abandoned, want at most %d", got, fds)
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

// TestUnixNamesRefused: a Unix socket name that the system would take as
// another (cut at a NUL byte, or cut to fit sun_path) is refused with
// EINVAL by Listen and Dial, and nothing is made under the cut name; a
// listen in a missing directory is ENOENT; on both drivers.
func TestUnixNamesRefused(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		u := uv.UvtNewReactorOn(t, d)
		stop := uv.UvtServe(t, u)
		defer stop()
		dir := t.TempDir()
		long := filepath.Join(dir, strings.Repeat("s", 108-len(dir))) // 109 bytes
		for _, name := range []string{filepath.Join(dir, "a\x00b"), long} {
			if ln, err := uv.Listen(u.Reactor, "unix", name); !errors.Is(err, syscall.EINVAL) {
				t.Errorf("Listen(unix, %q) = %v, want EINVAL", name, err)
				if ln != nil {
					ln.Close()
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
			if c, err := uv.Dial(ctx, u.Reactor, "unix", name); !errors.Is(err, syscall.EINVAL) {
				t.Errorf("Dial(unix, %q) = %v, want EINVAL", name, err)
				if c != nil {
					c.Close()
				}
			}
			cancel()
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 0 {
			t.Errorf("refused names left %d files in the directory (%s...)", len(ents), ents[0].Name())
		}
		if ln, err := uv.Listen(u.Reactor, "unix", filepath.Join(dir, "missing", "s")); !errors.Is(err, syscall.ENOENT) {
			t.Errorf("Listen in a missing directory = %v, want ENOENT", err)
			if ln != nil {
				ln.Close()
			}
		}
	})
}

// TestOpenFileNULRefused: a name with a NUL byte is refused with EINVAL,
// as package os does, and the name cut at the NUL is not opened nor made.
func TestOpenFileNULRefused(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		u := uv.UvtNewReactorOn(t, d)
		stop := uv.UvtServe(t, u)
		defer stop()
		dir := t.TempDir()
		ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
		defer cancel()
		f, err := uv.OpenFile(ctx, u.Reactor, filepath.Join(dir, "secret\x00.pub"), os.O_CREATE|os.O_RDWR, 0o600)
		if !errors.Is(err, syscall.EINVAL) {
			t.Errorf("OpenFile with a NUL byte = %v, want EINVAL", err)
		}
		if f != nil {
			f.Close()
		}
		if _, err := os.Stat(filepath.Join(dir, "secret")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the name cut at the NUL was made (%v)", err)
		}
	})
}

// TestDialEndedContext: Dial with a context that has ended connects
// nothing and returns the context's error.
func TestDialEndedContext(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		c, err := uv.Dial(ctx, v.u.Reactor, "tcp4", v.ln.Addr().String())
		if !errors.Is(err, context.Canceled) || c != nil {
			t.Errorf("Dial with a cancelled context = %v, %v; want nil, context.Canceled", c, err)
		}
		if c != nil {
			c.Close()
		}
		v.finish(t)
	})
}

// TestOpenPipeUnwatchable: a descriptor epoll cannot watch (a regular
// file, /dev/null, a directory) is refused by OpenPipe with EPERM on both
// drivers (libuv would abort at the first read), and stays the caller's.
func TestOpenPipeUnwatchable(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		u := uv.UvtNewReactorOn(t, d)
		stop := uv.UvtServe(t, u)
		defer stop()
		dir := t.TempDir()
		file := filepath.Join(dir, "f")
		uv.UvtMust(t, os.WriteFile(file, []byte("x"), 0o600))
		for _, name := range []string{file, os.DevNull, dir} {
			fd, err := syscall.Open(name, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
			uv.UvtMust(t, err)
			c, err := uv.OpenPipe(u.Reactor, fd)
			if !errors.Is(err, syscall.EPERM) {
				t.Errorf("OpenPipe(%s) = %v, want EPERM", name, err)
			}
			if c != nil {
				buf := make([]byte, 1)
				c.SetReadDeadline(deadlineSoon())
				c.Read(buf)
				c.Close()
				continue
			}
			if err := syscall.Close(fd); err != nil {
				t.Errorf("the refused descriptor of %s is not the caller's any more: %v", name, err)
			}
		}
	})
}
