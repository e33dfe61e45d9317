package nettest

import (
	"context"
	"net"
	"testing"

	"golang.org/x/net/nettest"

	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// TestConn: a connected pair of IOs (Dial, and Accept on a uv.Listener)
// over TCP loopback, served by a reactor of their own, is a net.Conn by
// nettest's rules (deadlines, concurrent use, Close unblocking), on each
// driver. A driver this build lacks (libuv without cgo) is said and
// skipped.
func TestConn(t *testing.T) {
	for _, d := range []reactor.Driver{reactor.DriverLibuv, reactor.DriverGo} {
		t.Run(d.String(), func(t *testing.T) {
			if r, err := reactor.New(reactor.Options{Driver: d}); err != nil {
				t.Skipf("no %v driver in this build: %v", d, err)
			} else {
				r.Close()
			}
			nettest.TestConn(t, func() (c1, c2 net.Conn, stop func(), err error) { return pair(d) })
		})
	}
}

// pair makes a reactor on driver d, serving on a goroutine, and a
// connected pair of IOs on it; stop closes them and the reactor.
func pair(d reactor.Driver) (c1, c2 net.Conn, stop func(), err error) {
	r, err := reactor.New(reactor.Options{Driver: d})
	if err != nil {
		return nil, nil, nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- r.Serve(ctx) }()
	end := func() {
		cancel()
		<-served
		r.Close()
	}
	ln, err := uv.Listen(r, "tcp4", "127.0.0.1:0")
	if err != nil {
		end()
		return nil, nil, nil, err
	}
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	c, err := uv.Dial(ctx, r, "tcp4", ln.Addr().String())
	if err != nil {
		ln.Close()
		end()
		return nil, nil, nil, err
	}
	s := <-accepted
	ln.Close()
	return c, s, func() {
		c.Close()
		if s != nil {
			s.Close()
		}
		end()
	}, nil
}
