package uv

import (
	"testing"

	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
)

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
			fd, _ = s.loop.Fileno(s.h)
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
