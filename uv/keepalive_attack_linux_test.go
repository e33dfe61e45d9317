package uv

import (
	"errors"
	"math"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
)

// netKeepAliveOf reads a net.TCPConn's keep-alive options.
func netKeepAliveOf(t *testing.T, c *net.TCPConn) keepAlive {
	t.Helper()
	rc, err := c.SyscallConn()
	UvtMust(t, err)
	var k keepAlive
	UvtMust(t, rc.Control(func(fd uintptr) {
		get := func(level, opt int) int {
			v, err := unix.GetsockoptInt(int(fd), level, opt)
			UvtMust(t, err)
			return v
		}
		k = keepAlive{get(unix.SOL_SOCKET, unix.SO_KEEPALIVE), get(unix.IPPROTO_TCP, tcpKeepIdle), get(unix.IPPROTO_TCP, unix.TCP_KEEPINTVL), get(unix.IPPROTO_TCP, unix.TCP_KEEPCNT)}
	}))
	return k
}

// keepAliveStep is what a SetKeepAliveConfig left: the errno it failed
// with (0: none) and the socket's options.
type keepAliveStep struct {
	Errno syscall.Errno
	Opts  keepAlive
}

func testErrno(err error) syscall.Errno {
	var e syscall.Errno
	if errors.As(err, &e) {
		return e
	}
	if err != nil {
		return math.MaxInt32
	}
	return 0
}

// TestTCPKeepAliveLikeNet: the same SetKeepAliveConfig calls, refused
// ones among them (each field in turn, probes on and off, fields left
// alone), leave an IO's socket as they leave a net.TCPConn's, with the same
// errno, on both drivers.
func TestTCPKeepAliveLikeNet(t *testing.T) {
	const huge = 40000 * time.Second // past Linux's 32767 s
	cfgs := []net.KeepAliveConfig{
		{Enable: true, Idle: 30 * time.Second, Interval: 5 * time.Second, Count: 3},
		{Enable: true, Idle: huge, Interval: 6 * time.Second, Count: 4},
		{Enable: true, Idle: -1, Interval: huge, Count: 5},
		{Enable: true, Idle: -1, Interval: -1, Count: 300},
		{Enable: false, Idle: huge, Interval: 7 * time.Second, Count: 6},
		{Enable: false, Idle: 40 * time.Second, Interval: huge, Count: 6},
		{Enable: true, Idle: -1, Interval: -1, Count: -1},
		{Enable: true, Idle: 20 * time.Second, Interval: -1, Count: -1},
		{Enable: true, Idle: math.MaxInt64, Interval: -1, Count: -1},
		{Enable: true, Idle: (1<<32 + 5) * time.Second, Interval: -1, Count: -1},
		{Enable: true, Idle: 50 * time.Second, Interval: 2 * time.Second, Count: -1},
		{Enable: true},
	}
	nl, err := net.Listen("tcp4", "127.0.0.1:0")
	UvtMust(t, err)
	defer nl.Close()
	nc, err := net.Dial("tcp4", nl.Addr().String())
	UvtMust(t, err)
	defer nc.Close()
	UvtMust(t, nc.(*net.TCPConn).SetKeepAlive(false)) // off, as uvevent's connections start
	var want []keepAliveStep
	for _, cfg := range cfgs {
		err := nc.(*net.TCPConn).SetKeepAliveConfig(cfg)
		want = append(want, keepAliveStep{testErrno(err), netKeepAliveOf(t, nc.(*net.TCPConn))})
	}
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		u := UvtNewReactorOn(t, d)
		stop := UvtServe(t, u)
		ln, c, s := tcpPairOn(t, u)
		// net's connection starts with the system's options: so does this one.
		var got []keepAliveStep
		for _, cfg := range cfgs {
			err := c.SetKeepAliveConfig(cfg)
			got = append(got, keepAliveStep{testErrno(err), keepAliveOf(t, c)})
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("after each of %+v (-net +uv):\n%s", cfgs, diff)
		}
		c.Close()
		s.Close()
		ln.Close()
		stop()
		UvtShutdown(t, u, false)
	})
}

// TestDialerKeepAliveLeavesTheCount: a Dialer's KeepAlive sets the idle
// delay and the interval and leaves the count as the system has it (9),
// on both drivers: the libuv driver's uv_tcp_keepalive sets 10 of its own,
// which must not stay.
func TestDialerKeepAliveLeavesTheCount(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		u := UvtNewReactorOn(t, d)
		stop := UvtServe(t, u)
		ln, err := Listen(u.Reactor, "tcp4", "127.0.0.1:0")
		UvtMust(t, err)
		acc := make(chan *IO, 1)
		go func() {
			c, _ := ln.AcceptIO(t.Context())
			acc <- c
		}()
		dl := &Dialer{Reactor: u.Reactor, KeepAlive: 20 * time.Second}
		c, err := dl.DialIO(t.Context(), "tcp4", ln.Addr().String())
		UvtMust(t, err)
		s := UvtRecv(t, acc, "accepted connection")
		if diff := cmp.Diff(keepAlive{1, 20, 20, 9}, keepAliveOf(t, c)); diff != "" {
			t.Errorf("Dialer{KeepAlive: 20s} (-want +got):\n%s", diff)
		}
		refused := &Dialer{Reactor: u.Reactor, KeepAliveConfig: net.KeepAliveConfig{Enable: true, Idle: 10 * time.Second, Interval: 40000 * time.Second}}
		go func() {
			c, _ := ln.AcceptIO(t.Context())
			acc <- c
		}()
		if c2, err := refused.DialIO(t.Context(), "tcp4", ln.Addr().String()); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("a refused interval: dial = %v, want EINVAL", err)
			if c2 != nil {
				c2.Close()
			}
		}
		if s2 := UvtRecv(t, acc, "accepted connection"); s2 != nil {
			s2.Close()
		}
		c.Close()
		s.Close()
		ln.Close()
		stop()
		UvtShutdown(t, u, false)
	})
}
