package uv_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/uv"
)

// TestGoBreakDialFailureClosesIO: a Dial that fails (a refused port, a
// socket path that does not exist, a path that is no socket) returns only
// the error, so nobody can close the IO it had begun: it must close
// itself, not hold its handle and descriptor until the collector runs.
func TestGoBreakDialFailureClosesIO(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		ln, err := uv.Listen(u.Reactor, "tcp4", "127.0.0.1:0")
		uv.UvtMust(t, err)
		closedPort := ln.Addr().String()
		uv.UvtMust(t, ln.Close())
		dir := t.TempDir()
		notSocket := filepath.Join(dir, "file")
		uv.UvtMust(t, os.WriteFile(notSocket, nil, 0o600))
		uv.UvtWaitFor(t, "the listener's handle to go", func() bool { return handlesLeft(u) == 0 })
		fds := uv.UvtOpenFDs(t)
		for _, tc := range []struct {
			network, addr string
			want          error
		}{
			{"tcp4", closedPort, syscall.ECONNREFUSED},
			{"unix", filepath.Join(dir, "nobody"), syscall.ENOENT},
			{"unix", notSocket, syscall.ECONNREFUSED},
		} {
			_, err := uv.Dial(context.Background(), u.Reactor, tc.network, tc.addr)
			if !errors.Is(err, tc.want) {
				t.Errorf("Dial(%s, %s) = %v, want %v", tc.network, tc.addr, err, tc.want)
			}
			if n := u.Stats().Handles["io"]; n != 0 {
				t.Errorf("after the failed Dial(%s, %s): %d IOs open, want 0", tc.network, tc.addr, n)
			}
		}
		// An async dial's future tells the same, with the IO closed.
		f, err := uv.DialAsync(u.Reactor, "tcp4", closedPort)
		uv.UvtMust(t, err)
		if _, err := event.AwaitValue[*uv.IO](context.Background(), f); !errors.Is(err, syscall.ECONNREFUSED) {
			t.Errorf("DialAsync to a closed port: %v, want ECONNREFUSED", err)
		}
		// C handles close on the next turn of libuv: wait for it.
		uv.UvtWaitFor(t, "the failed dials' handles to go", func() bool { return handlesLeft(u) == 0 })
		if got := uv.UvtOpenFDs(t); got > fds {
			t.Errorf("%d descriptors open after the failed dials, want at most %d", got, fds)
		}
		stop()
		uv.UvtShutdown(t, u, false)
	})
}

// TestGoBreakDialAbandoned: a Dial whose context is cancelled returns the
// context's error; the connect goes on and, whenever it completes, its IO
// is closed: the server reads the end of the stream, and no handle is
// left.
func TestGoBreakDialAbandoned(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := uv.Dial(ctx, v.u.Reactor, "tcp4", v.ln.Addr().String())
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Dial with a cancelled context = %v, want context.Canceled", err)
		}
		s, err := v.ln.AcceptIO(context.Background())
		uv.UvtMust(t, err)
		if n, err := s.Read(make([]byte, 1)); n != 0 || err != io.EOF {
			t.Errorf("server read from the abandoned connection = %d, %v; want io.EOF", n, err)
		}
		uv.UvtMust(t, s.Close())
		uv.UvtMust(t, v.ln.Close())
		uv.UvtWaitFor(t, "the abandoned connection's handle to go", func() bool { return handlesLeft(v.u) == 0 })
		v.finish(t)
	})
}
