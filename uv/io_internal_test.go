package uv

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
	"golang.org/x/sys/unix"
)

// TestIOEndWhileStopped: the stream's end (or bytes and then the end)
// arriving while the IO is stopped reaches its callbacks at the next
// Start, after the bytes kept: a callback waiting for io.EOF is not left
// waiting for ever.
func TestIOEndWhileStopped(t *testing.T) {
	for _, payload := range []string{"", "abc"} {
		t.Run("bytes="+payload, func(t *testing.T) {
			UvtEachDriver(t, func(t *testing.T, u *UvtReactor) {
				stop := UvtServe(t, u)
				a, b, err := Pipe(u.Reactor)
				UvtMust(t, err)
				type note struct {
					Data string
					Err  error
				}
				var got []note // loop-owned
				ended := make(chan struct{})
				_, err = event.Subscribe(a, func(_ event.Event, res any, err error) {
					p := a.Result(res)
					got = append(got, note{string(p), err})
					if errors.Is(err, io.EOF) {
						close(ended) // the end comes once
					}
				})
				UvtMust(t, err)
				UvtMust(t, a.Start())
				UvtMust(t, a.Stop())
				if payload != "" {
					_, err = b.Write([]byte(payload))
					UvtMust(t, err)
				}
				UvtMust(t, b.CloseWrite())
				// Reading runs ahead while stopped: wait until it met the end.
				UvtWaitFor(t, "the end read ahead", func() bool {
					var rerr error
					a.e.exec(func() { rerr = a.e.rerr })
					return rerr != nil
				})
				UvtMust(t, a.Start())
				UvtRecv(t, ended, "the end at the callbacks")
				want := []note{{"", io.EOF}}
				if payload != "" {
					want = []note{{payload, nil}, {"", io.EOF}}
				}
				UvtMust(t, u.Call(func() {
					if diff := cmp.Diff(want, got, cmp.Comparer(func(x, y error) bool { return errors.Is(x, y) })); diff != "" {
						t.Errorf("callbacks after Start (-want +got):\n%s", diff)
					}
				}))
				UvtMust(t, a.Close())
				UvtMust(t, b.Close())
				stop()
				UvtShutdown(t, u, false)
			})
		})
	}
}

// keepAlive is a socket's keep-alive options as the kernel reports them.
type keepAlive struct {
	On                    int
	Idle, Interval, Count int // seconds, seconds, probes
}

// keepAliveOf reads the IO's keep-alive options from its descriptor.
func keepAliveOf(t *testing.T, c *IO) keepAlive {
	t.Helper()
	fd := fdOf(t, c)
	get := func(level, opt int) int {
		v, err := unix.GetsockoptInt(fd, level, opt)
		UvtMust(t, err)
		return v
	}
	return keepAlive{
		On:       get(unix.SOL_SOCKET, unix.SO_KEEPALIVE),
		Idle:     get(unix.IPPROTO_TCP, tcpKeepIdle),
		Interval: get(unix.IPPROTO_TCP, unix.TCP_KEEPINTVL),
		Count:    get(unix.IPPROTO_TCP, unix.TCP_KEEPCNT),
	}
}

// TestTCPKeepAliveConfig: SetKeepAliveConfig sets the idle delay, the
// interval and the count of keep-alive probes, as net.TCPConn's does, on
// both drivers (libuv's uv_tcp_keepalive sets the delay only): durations
// are rounded up to whole seconds, zero fields take net's defaults (15 s,
// 15 s, 9), negative ones leave the option as it was; SetKeepAlive turns
// the probes on or off and leaves the rest; a Unix socket refuses it.
func TestTCPKeepAliveConfig(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		u := UvtNewReactorOn(t, d)
		stop := UvtServe(t, u)
		ln, c, s := tcpPairOn(t, u)

		before := keepAliveOf(t, c)
		if before.On != 0 {
			t.Errorf("a dialled connection has SO_KEEPALIVE = %d, want 0 (off until asked, as in libuv)", before.On)
		}
		steps := []struct {
			name string
			set  func() error
			want keepAlive
		}{
			{"all fields", func() error {
				return c.SetKeepAliveConfig(net.KeepAliveConfig{Enable: true, Idle: 30 * time.Second, Interval: 5 * time.Second, Count: 4})
			}, keepAlive{1, 30, 5, 4}},
			{"rounded up", func() error {
				return c.SetKeepAliveConfig(net.KeepAliveConfig{Enable: true, Idle: 1500 * time.Millisecond, Interval: time.Nanosecond, Count: 3})
			}, keepAlive{1, 2, 1, 3}},
			{"negative leaves as it was", func() error {
				return c.SetKeepAliveConfig(net.KeepAliveConfig{Enable: true, Idle: -1, Interval: 7 * time.Second, Count: -1})
			}, keepAlive{1, 2, 7, 3}},
			{"zero takes net's defaults", func() error {
				return c.SetKeepAliveConfig(net.KeepAliveConfig{Enable: true})
			}, keepAlive{1, 15, 15, 9}},
			{"off keeps the rest", func() error { return c.SetKeepAlive(false) }, keepAlive{0, 15, 15, 9}},
			{"on again keeps the rest", func() error { return c.SetKeepAlive(true) }, keepAlive{1, 15, 15, 9}},
			{"disabled with options", func() error {
				return c.SetKeepAliveConfig(net.KeepAliveConfig{Idle: 60 * time.Second, Interval: -1, Count: 2})
			}, keepAlive{0, 60, 15, 2}},
		}
		for _, st := range steps {
			if err := st.set(); err != nil {
				t.Errorf("%s: %v", st.name, err)
				continue
			}
			if diff := cmp.Diff(st.want, keepAliveOf(t, c)); diff != "" {
				t.Errorf("%s: keep-alive options (-want +got):\n%s", st.name, diff)
			}
		}
		// The accepted end is set the same way.
		UvtMust(t, s.SetKeepAliveConfig(net.KeepAliveConfig{Enable: true, Idle: 10 * time.Second, Interval: 2 * time.Second, Count: 5}))
		if diff := cmp.Diff(keepAlive{1, 10, 2, 5}, keepAliveOf(t, s)); diff != "" {
			t.Errorf("accepted end (-want +got):\n%s", diff)
		}
		// A value the kernel refuses is its error.
		if err := c.SetKeepAliveConfig(net.KeepAliveConfig{Enable: true, Count: 1 << 20}); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("Count 1<<20: %v, want EINVAL", err)
		}
		c.Close()
		if err := c.SetKeepAlive(true); !errors.Is(err, ErrClosed) {
			t.Errorf("SetKeepAlive after Close: %v, want ErrClosed", err)
		}
		s.Close()
		ln.Close()

		a, b, err := Pipe(u.Reactor)
		UvtMust(t, err)
		if err := a.SetKeepAliveConfig(net.KeepAliveConfig{Enable: true}); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("SetKeepAliveConfig on a Unix socket: %v, want EINVAL", err)
		}
		a.Close()
		b.Close()
		stop()
		UvtShutdown(t, u, false)
	})
}

// TestTCPKeepAliveRefusedLeavesTheRest: a value the kernel refuses fails
// with EINVAL and leaves the socket as the same calls of net.TCPConn's do,
// the same on both drivers: the options before it set, the rest as they
// were. On the libuv driver, uv_tcp_keepalive sets an interval of 1 s and
// 10 probes of its own, which a refused Interval or Count left on the socket
// until 2026-12-07 (the pure-Go driver left the ones before).
func TestTCPKeepAliveRefusedLeavesTheRest(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		u := UvtNewReactorOn(t, d)
		stop := UvtServe(t, u)
		ln, c, s := tcpPairOn(t, u)
		UvtMust(t, c.SetKeepAliveConfig(net.KeepAliveConfig{Enable: true, Idle: 30 * time.Second, Interval: 5 * time.Second, Count: 3}))
		steps := []struct {
			name string
			cfg  net.KeepAliveConfig
			want keepAlive
		}{
			{"Interval refused", net.KeepAliveConfig{Enable: true, Idle: 31 * time.Second, Interval: 40000 * time.Second, Count: 4}, keepAlive{1, 31, 5, 3}},
			{"Count refused", net.KeepAliveConfig{Enable: true, Idle: 32 * time.Second, Interval: 6 * time.Second, Count: 300}, keepAlive{1, 32, 6, 3}},
		}
		for _, st := range steps {
			if err := c.SetKeepAliveConfig(st.cfg); !errors.Is(err, syscall.EINVAL) {
				t.Errorf("%s: %v, want EINVAL", st.name, err)
			}
			if diff := cmp.Diff(st.want, keepAliveOf(t, c)); diff != "" {
				t.Errorf("%s: keep-alive options (-want +got):\n%s", st.name, diff)
			}
		}
		c.Close()
		s.Close()
		ln.Close()
		stop()
		UvtShutdown(t, u, false)
	})
}

// TestTCPNoDelayByDefault: dialled and accepted TCP connections have
// TCP_NODELAY set, as package net's do, on both drivers; SetNoDelay(false)
// clears it.
func TestTCPNoDelayByDefault(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		u := UvtNewReactorOn(t, d)
		stop := UvtServe(t, u)
		ln, c, s := tcpPairOn(t, u)
		for _, x := range []*IO{c, s} {
			if got := noDelayOf(t, x); got != 1 {
				t.Errorf("%s: TCP_NODELAY = %d, want 1", x.Info(), got)
			}
		}
		UvtMust(t, c.SetNoDelay(false))
		if got := noDelayOf(t, c); got != 0 {
			t.Errorf("after SetNoDelay(false): TCP_NODELAY = %d, want 0", got)
		}
		c.Close()
		s.Close()
		ln.Close()
		stop()
		UvtShutdown(t, u, false)
	})
}

// tcpPairOn listens on u's loopback and dials it: the listener and the
// client and server ends.
func tcpPairOn(t *testing.T, u *UvtReactor) (ln *Listener, c, s *IO) {
	t.Helper()
	ln, err := Listen(u.Reactor, "tcp4", "127.0.0.1:0")
	UvtMust(t, err)
	acc := make(chan *IO, 1)
	go func() {
		c, err := ln.AcceptIO(t.Context())
		if err != nil {
			t.Errorf("AcceptIO: %v", err)
		}
		acc <- c
	}()
	c, err = Dial(t.Context(), u.Reactor, "tcp4", ln.Addr().String())
	UvtMust(t, err)
	return ln, c, UvtRecv(t, acc, "accepted connection")
}

// fdOf is the IO's descriptor, for the tests that read its options.
func fdOf(t *testing.T, c *IO) int {
	t.Helper()
	e := c.e
	fd := -1
	UvtMust(t, e.r.Call(func() {
		switch s := e.t.(type) {
		case *goStream:
			fd = s.fd
		case *uvStream:
			if s.lz != nil {
				fd = s.lz.fd // unopened in libuv (or opened over a duplicate): the socket
			} else {
				fd, _ = s.loop.Fileno(s.h)
			}
		}
	}))
	return fd
}

// noDelayOf reads the IO's TCP_NODELAY from its descriptor.
func noDelayOf(t *testing.T, c *IO) int {
	t.Helper()
	v, err := unix.GetsockoptInt(fdOf(t, c), unix.IPPROTO_TCP, unix.TCP_NODELAY)
	UvtMust(t, err)
	return v
}

// manyClient dials manyConns connections to addr, sends a byte on each and
// reads its echo, says "ok", and holds them until its stdin closes. It is
// a process of its own, so that its descriptors do not count against the
// server's.
func manyClient(addr string) int {
	n, _ := strconv.Atoi(os.Getenv("UVT_MANY_N"))
	conns := make([]net.Conn, 0, n)
	for range n {
		c, err := net.Dial("tcp4", addr)
		if err != nil {
			fmt.Println("dial:", err)
			return 1
		}
		conns = append(conns, c)
	}
	b := []byte{0}
	for i, c := range conns {
		b[0] = byte(i)
		if _, err := c.Write(b); err != nil {
			fmt.Println("write:", err)
			return 1
		}
	}
	for i, c := range conns {
		if _, err := io.ReadFull(c, b); err != nil || b[0] != byte(i) {
			fmt.Println("echo:", b, err)
			return 1
		}
	}
	fmt.Println("ok")
	io.Copy(io.Discard, os.Stdin)
	return 0
}

// TestIOEventSizeClass: an IO's event fits in 512 bytes on either driver
// (uvStream, goStream): the largest of the allocator's size classes whose
// objects carry no header. At 513 bytes it would take the 704-byte class,
// 192 bytes more for every connection; what few IOs use is in ioRare,
// made on first use. A connection's read lane (readLane, made for every
// connection a net.Listener's Accept hands out) is in the 96-byte class.
func TestIOEventSizeClass(t *testing.T) {
	for _, c := range []struct {
		name      string
		size, max uintptr
	}{
		{"uvStream", unsafe.Sizeof(uvStream{}), 512},
		{"goStream", unsafe.Sizeof(goStream{}), 512},
		{"readLane", unsafe.Sizeof(readLane{}), 96},
	} {
		if c.size > c.max {
			t.Errorf("%s is %d bytes, want at most %d", c.name, c.size, c.max)
		}
	}
}
