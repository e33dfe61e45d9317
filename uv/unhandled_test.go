package uv_test

import (
	"context"
	"errors"
	"runtime"
	"syscall"
	"testing"

	"github.com/uvevent/uvevent/uv"
)

// TestBlockingFailuresAreNotUnhandled: the futures behind a blocking
// Dial, Dialer.DialContext and Write are awaited by the goroutine that
// called them, which gets the error: a failure there is reported to
// nobody as unhandled, at the end of its turn or when collected.
func TestBlockingFailuresAreNotUnhandled(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		ln, err := uv.Listen(v.u.Reactor, "tcp4", "127.0.0.1:0")
		uv.UvtMust(t, err)
		closedPort := ln.Addr().String()
		uv.UvtMust(t, ln.Close())
		ctx := context.Background()
		if _, err := uv.Dial(ctx, v.u.Reactor, "tcp4", closedPort); !errors.Is(err, syscall.ECONNREFUSED) {
			t.Errorf("Dial to a closed port: %v, want ECONNREFUSED", err)
		}
		d := &uv.Dialer{Reactor: v.u.Reactor}
		if _, err := d.DialContext(ctx, "tcp4", closedPort); !errors.Is(err, syscall.ECONNREFUSED) {
			t.Errorf("Dialer.DialContext to a closed port: %v, want ECONNREFUSED", err)
		}
		s, nc := resetPeer(t, v)
		uv.UvtMust(t, nc.Close()) // RST
		for {
			if _, err := s.Write(make([]byte, 64<<10)); err != nil {
				if !isResetOrPipe(err) {
					t.Errorf("Write after the reset = %v, want ECONNRESET or EPIPE", err)
				}
				break
			}
		}
		for range 3 {
			runtime.GC()
			uv.UvtMust(t, v.u.Call(func() {})) // a later turn, for what the collector posts
		}
		v.finish(t, s) // no report, unhandled or other
	})
}
