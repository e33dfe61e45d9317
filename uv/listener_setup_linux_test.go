package uv_test

import (
	"context"
	"net"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// setUpAs reports what a test sees of an accepted connection's setup:
// whether TCP_NODELAY is on, and its two addresses.
type setUpAs struct {
	NoDelay       bool
	Local, Remote string
}

// (On the loop too: a callback's look. A failed getsockopt reads as
// TCP_NODELAY off.)
func setUpOf(t *testing.T, s *uv.IO) setUpAs {
	nd, err := uv.UvtSockoptInt(t, s, unix.IPPROTO_TCP, unix.TCP_NODELAY)
	var got setUpAs
	got.NoDelay = err == nil && nd != 0
	if a := s.LocalAddr(); a != nil {
		got.Local = a.String()
	}
	if a := s.RemoteAddr(); a != nil {
		got.Remote = a.String()
	}
	return got
}

// TestAcceptSetsUpItsConnection: an accepted TCP connection's setup
// (TCP_NODELAY, and the read of its local address with getsockname(2))
// is made by the goroutine of the Accept that takes it, as package net's
// accepting goroutine makes it, not by the loop, on either driver; the
// connection has TCP_NODELAY on and both its addresses when Accept
// returns.
func TestAcceptSetsUpItsConnection(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		c0, s0 := v.pair(t) // the first Accept subscribes and starts
		onLoop := uv.UvtLoopSetups()
		const n = 10
		peers := dialN(t, v.ln, n)
		want := setUpsOf(v.ln, peers, true)
		var got []setUpAs
		var closers []interface{ Close() error }
		for range n {
			s, err := v.ln.AcceptIO(context.Background())
			uv.UvtMust(t, err)
			closers = append(closers, s)
			got = append(got, setUpOf(t, s))
		}
		if d := setUpsDiff(want, got); d != "" {
			t.Errorf("accepted connections' setup (-want +got):\n%s", d)
		}
		if got := uv.UvtLoopSetups() - onLoop; got != 0 {
			t.Errorf("%d setups made on the loop for %d connections Accept took, want 0", got, n)
		}
		v.finish(t, append(closers, c0, s0)...)
	})
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// TestListenerCallbacksGetSetUpConnections: a callback gets a TCP
// connection set up (TCP_NODELAY on, both addresses read) before it sees
// it, on either driver: one the listener gives it at once, and one queued
// for Accept (its setup handed to the Accept that takes it) that a
// callback subscribing gets instead; the loop makes both setups.
func TestListenerCallbacksGetSetUpConnections(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		u, stop, ln, queued := oneQueuedForAccept(t, d)
		onLoop := uv.UvtLoopSetups()
		type seen struct {
			s  *uv.IO
			as setUpAs
		}
		got := make(chan seen, 2)
		_, err := event.Subscribe(ln, func(_ event.Event, res any, err error) {
			if s, ok := res.(*uv.IO); ok {
				got <- seen{s, setUpOf(t, s)} // as the callback sees it, on the loop
			}
		})
		uv.UvtMust(t, err)
		first := uv.UvtRecv(t, got, "the queued connection, for the callback")
		direct, err := net.Dial("tcp4", ln.Addr().String())
		uv.UvtMust(t, err)
		defer direct.Close()
		second := uv.UvtRecv(t, got, "a connection the callback gets at once")
		want := []setUpAs{
			{NoDelay: true, Local: ln.Addr().String(), Remote: queued.LocalAddr().String()},
			{NoDelay: true, Local: ln.Addr().String(), Remote: direct.LocalAddr().String()},
		}
		if d := cmp.Diff(want, []setUpAs{first.as, second.as}); d != "" {
			t.Errorf("the callbacks' connections as they got them (-want +got):\n%s", d)
		}
		if n := uv.UvtLoopSetups() - onLoop; n != 2 {
			t.Errorf("%d setups made on the loop for the callbacks' 2 connections, want 2", n)
		}
		first.s.Close()
		second.s.Close()
		uv.UvtMust(t, ln.Close())
		stop()
		uv.UvtShutdown(t, u, false)
	})
}
