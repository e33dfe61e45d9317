package uv_test

import (
	"context"
	"errors"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// injectInitFault makes the libuv driver's next handle init fail with
// errno: set by listener_fault_uvfaults_test.go in builds with the shim's
// fault switch (build tag uvfaults), nil otherwise.
var injectInitFault func(errno syscall.Errno)

// One failed accept does not stop a listener: with two connections waiting,
// the accept fails once with ENOMEM; the listener reports it (a temporary
// error), pauses, and then accepts both, through OnAccept and through
// AcceptIO. On the libuv driver the fault is the shim's uv_tcp_init for
// the connection's handle (made before accept(2), so the connection stays
// in the backlog); the pure-Go driver has no handle to init, and its fault
// is accept(2) itself failing.
func TestListenerGoesOnAfterFailedAccept(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		inject := func() { uv.UvtFailAccepts(t, syscall.ENOMEM, 1) }
		if d == reactor.DriverLibuv {
			if injectInitFault == nil {
				t.Skip("the libuv driver's failed init needs the shim's fault switch: build tag uvfaults (make stress runs it)")
			}
			inject = func() { injectInitFault(syscall.ENOMEM) }
		}
		for _, path := range []string{"OnAccept", "AcceptIO"} {
			t.Run(path, func(t *testing.T) {
				u := uv.UvtNewReactorOn(t, d)
				stop := uv.UvtServe(t, u)
				defer stop()
				ln, err := uv.Listen(u.Reactor, "tcp4", "127.0.0.1:0")
				uv.UvtMust(t, err)
				defer ln.Close()
				var peers []net.Conn
				for range 2 {
					c, err := net.Dial("tcp4", ln.Addr().String()) // in the backlog once Dial returns
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
