package uv

import (
	"context"
	"testing"

	"golang.org/x/sys/unix"
)

// ioFD returns the descriptor under an IO, on the loop.
func ioFD(t *testing.T, c *IO) int {
	t.Helper()
	fd := -1
	UvtMust(t, c.e.exec(func() {
		switch s := c.e.t.(type) {
		case *goStream:
			fd = s.fd
		case *uvStream:
			var err error
			fd, err = s.loop.Fileno(s.h)
			UvtMust(t, err)
		}
	}))
	return fd
}

// TestGoBreakNoDelayDefault: TCP connections, accepted or dialled, have
// Nagle's algorithm off by default, as package net's do (docs/io.md), on
// both drivers.
func TestGoBreakNoDelayDefault(t *testing.T) {
	UvtEachDriver(t, func(t *testing.T, u *UvtReactor) {
		stop := UvtServe(t, u)
		ln, err := Listen(u.Reactor, "tcp4", "127.0.0.1:0")
		UvtMust(t, err)
		acc := make(chan *IO, 1)
		go func() {
			s, err := ln.AcceptIO(context.Background())
			if err != nil {
				t.Errorf("AcceptIO: %v", err)
			}
			acc <- s
		}()
		c, err := Dial(context.Background(), u.Reactor, "tcp4", ln.Addr().String())
		UvtMust(t, err)
		s := UvtRecv(t, acc, "the accepted connection")
		for what, x := range map[string]*IO{"dialled": c, "accepted": s} {
			v, err := unix.GetsockoptInt(ioFD(t, x), unix.IPPROTO_TCP, unix.TCP_NODELAY)
			if err != nil || v == 0 {
				t.Errorf("TCP_NODELAY of a %s connection = %d, %v; want on", what, v, err)
			}
			UvtMust(t, x.SetNoDelay(false))
			if v, _ := unix.GetsockoptInt(ioFD(t, x), unix.IPPROTO_TCP, unix.TCP_NODELAY); v != 0 {
				t.Errorf("TCP_NODELAY of a %s connection after SetNoDelay(false) = %d", what, v)
			}
			UvtMust(t, x.Close())
		}
		UvtMust(t, ln.Close())
		stop()
		UvtShutdown(t, u, false)
	})
}
