package uv_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// TestOpenFileAbandonedLeaksNothing: OpenFile calls whose context ends
// (nil, cancelled before, or a deadline that passes while the open runs) leave
// no descriptor open, whether the open completes before or after the
// request's close: counted in /proc/self/fd once the reactor closed.
func TestOpenFileAbandonedLeaksNothing(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		name := filepath.Join(t.TempDir(), "f")
		uv.UvtMust(t, os.WriteFile(name, []byte("x"), 0o600))
		_, base := uv.UvtBaseline(t)
		u := uv.UvtNewReactorOn(t, d)
		stop := uv.UvtServe(t, u)
		var wg sync.WaitGroup
		for i := range 200 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var ctx context.Context // nil for one in three: refused at once
				switch i % 3 {
				case 1:
					c, cancel := context.WithCancel(context.Background())
					cancel()
					ctx = c
				case 2:
					c, cancel := context.WithTimeout(context.Background(), time.Duration(i%50)*10*time.Microsecond)
					defer cancel()
					ctx = c
				}
				if f, err := uv.OpenFile(ctx, u.Reactor, name, os.O_RDONLY, 0); err == nil {
					f.Close()
				}
			}()
		}
		wg.Wait()
		stop()
		uv.UvtShutdown(t, u, false)
		fdsBackTo(t, base, "200 abandoned opens and the reactor's Close")
	})
}

// TestReactorCloseWithOpensAndDials: the reactor's Close with opens and
// dials in flight leaves no descriptor open.
func TestReactorCloseWithOpensAndDials(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		name := filepath.Join(t.TempDir(), "f")
		uv.UvtMust(t, os.WriteFile(name, []byte("x"), 0o600))
		_, base := uv.UvtBaseline(t)
		peer, err := net.Listen("tcp4", "127.0.0.1:0")
		uv.UvtMust(t, err)
		defer peer.Close()
		u := uv.UvtNewReactorOn(t, d)
		ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
		defer cancel()
		served := make(chan error, 1)
		go func() { served <- u.Serve(ctx) }() // ends with the reactor's Close, whatever it says
		var wg sync.WaitGroup
		for i := range 100 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if i%2 == 0 {
					if f, err := uv.OpenFile(ctx, u.Reactor, name, os.O_RDONLY, 0); err == nil {
						f.Close()
					}
					return
				}
				if c, err := uv.Dial(ctx, u.Reactor, "tcp4", peer.Addr().String()); err == nil {
					c.Close()
				}
			}()
		}
		time.Sleep(time.Millisecond) // some in flight; the count must hold wherever Close falls
		u.Close()
		wg.Wait()
		uv.UvtRecv(t, served, "Serve's end")
		peer.Close()
		fdsBackTo(t, base, "the reactor's Close with opens and dials in flight")
	})
}

// fdsBackTo waits for the open descriptors to come back to base (a pool
// job that finished after its request closed closes its descriptor a
// little later) and fails the test if they do not.
func fdsBackTo(t *testing.T, base int, after string) {
	t.Helper()
	deadline := time.Now().Add(uv.UvtSafety)
	for {
		got := uv.UvtOpenFDs(t)
		if got <= base {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("%d descriptors open after %s, %d before: %s", got, after, base, fdTargets())
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// fdTargets names what the open descriptors are, for a leak report.
func fdTargets() string {
	ents, _ := os.ReadDir("/proc/self/fd")
	var b strings.Builder
	for _, e := range ents {
		target, _ := os.Readlink(filepath.Join("/proc/self/fd", e.Name()))
		fmt.Fprintf(&b, "%s=%s ", e.Name(), target)
	}
	return b.String()
}

// TestFileCloseQueuedAtReactorClose: a File's Close whose close(2) still
// waits in the pool when the reactor closes: the reactor's Close takes the
// job back (the pool's task and the request both close, in either order),
// and the descriptor is closed all the same, as libuv's shim closes it
// when its close request is cancelled. Repeated: the reactor closes what
// it holds in no fixed order.
func TestFileCloseQueuedAtReactorClose(t *testing.T) {
	eachDriverCounted(t, func(t *testing.T, u *uv.UvtReactor, base, fds int) {
		name := filepath.Join(t.TempDir(), "f")
		uv.UvtMust(t, os.WriteFile(name, []byte("x"), 0o600))
		u.Close()
		for range 16 {
			u := uv.UvtNewReactorOn(t, u.Driver())
			stop := uv.UvtServe(t, u)
			f, err := uv.OpenFile(context.Background(), u.Reactor, name, os.O_RDONLY, 0)
			uv.UvtMust(t, err)
			_, _, release := holdPool(t, u)
			uv.UvtWaitFor(t, "the pool to be held", poolHeld)
			closed := make(chan error, 1)
			before := u.Stats().Handles["fs"]
			go func() { closed <- f.Close() }()
			uv.UvtWaitFor(t, "the close to be queued", func() bool { return u.Stats().Handles["fs"] > before })
			stop()
			// libuv's loop closes only once the blockers are done: the
			// reactor's Close waits for them, after it took the close back.
			done := make(chan error, 1)
			go func() { done <- u.Close() }()
			// The waiter hears its request closed, or the reactor closed,
			// whichever it sees first.
			if err := uv.UvtRecv(t, closed, "File.Close"); !errors.Is(err, event.ErrClosed) && !errors.Is(err, reactor.ErrReactorClosed) {
				t.Errorf("File.Close cut short by the reactor's Close = %v, want ErrClosed or ErrReactorClosed", err)
			}
			release()()
			uv.UvtMust(t, uv.UvtRecv(t, done, "the reactor's Close"))
		}
		uv.UvtNoLeaks(t, base, fds)
	})
}
