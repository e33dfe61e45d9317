package uv_test

import (
	"context"
	"errors"
	"net"
	"testing"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/uv"
)

// AcceptIO with a nil context is refused with ErrNilContext before it
// touches the listener: no panic, and no waiter left behind to swallow the
// next connection, which the next Accept gets. Both drivers.
func TestListenerAcceptIONilContextRefused(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		l, err := uv.Listen(u.Reactor, "tcp", "127.0.0.1:0")
		uv.UvtMust(t, err)
		var nilCtx context.Context // the bad input under test
		var got error
		if err := callBounded(func() { _, got = l.AcceptIO(nilCtx) }); err != nil {
			t.Fatalf("AcceptIO(nil): %v", err)
		}
		if !errors.Is(got, event.ErrNilContext) {
			t.Errorf("AcceptIO(nil) = %v, want ErrNilContext", got)
		}
		c, err := net.Dial("tcp", l.Addr().String())
		uv.UvtMust(t, err)
		defer c.Close()
		ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
		defer cancel()
		io, err := l.AcceptIO(ctx)
		if err != nil {
			t.Fatalf("AcceptIO after the refused one = %v, want the connection", err)
		}
		io.Close()
		l.Close()
		stop()
		uv.UvtShutdown(t, u, false)
	})
}
