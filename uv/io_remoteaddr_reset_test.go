package uv_test

import (
	"context"
	"net"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/uvevent/uvevent/uv"
)

// resetConn dials addr with the standard library and resets the
// connection (SO_LINGER 0: the close sends a RST), returning the address
// it had.
func resetConn(t *testing.T, network, addr string) string {
	t.Helper()
	c, err := net.Dial(network, addr)
	uv.UvtMust(t, err)
	local := c.LocalAddr().String()
	uv.UvtMust(t, c.(*net.TCPConn).SetLinger(0))
	uv.UvtMust(t, c.Close())
	return local
}

// TestRemoteAddrOfResetConnection: an accepted connection keeps its
// peer's address once the peer has reset it, as package net's do, whether
// the reset comes before the accept or after it (getpeername(2) then
// fails with ENOTCONN): RemoteAddr is never nil for an accepted TCP
// connection, over IPv4 and IPv6.
func TestRemoteAddrOfResetConnection(t *testing.T) {
	eachNetwork(t, func(t *testing.T, v *ioEnv) {
		ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
		defer cancel()
		// Reset before the accept: the connection waits in the backlog.
		want := resetConn(t, v.network, v.ln.Addr().String())
		s, err := v.ln.AcceptIO(ctx)
		uv.UvtMust(t, err)
		got := ""
		if a := s.RemoteAddr(); a != nil {
			got = a.String()
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("RemoteAddr of a connection reset before its accept (-want +got):\n%s", diff)
		}
		uv.UvtMust(t, s.Close())

		// Reset after the accept, the address not read before.
		acc := make(chan *uv.IO, 1)
		go func() {
			s, err := v.ln.AcceptIO(ctx)
			if err != nil {
				t.Errorf("AcceptIO: %v", err)
			}
			acc <- s
		}()
		c, err := net.Dial(v.network, v.ln.Addr().String())
		uv.UvtMust(t, err)
		s = uv.UvtRecv(t, acc, "the accepted connection")
		if s == nil {
			t.FailNow()
		}
		want = c.LocalAddr().String()
		uv.UvtMust(t, c.(*net.TCPConn).SetLinger(0))
		uv.UvtMust(t, c.Close())
		if _, err := s.Read(make([]byte, 1)); err == nil {
			t.Fatal("Read from a reset connection succeeded")
		}
		got = ""
		if a := s.RemoteAddr(); a != nil {
			got = a.String()
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("RemoteAddr of a connection reset after its accept (-want +got):\n%s", diff)
		}
		v.finish(t, s)
	})
}
