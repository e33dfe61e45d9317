package uv_test

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"sync"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/uvevent/uvevent/uv"
)

// TestIPCReceiveCancelRaces: Receives whose contexts end at random moments
// while connections are passed, then the receiving IPC's Close, on either
// driver. Every connection passed is taken by one Receive at most, and its
// peer reads the byte that Receive wrote; the others (queued or in flight
// at the Close) are closed, their peers read their end; no Receive returns
// an empty Passed with a nil error; every one ends with ErrClosed after the
// Close; nothing leaks.
func TestIPCReceiveCancelRaces(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		const passes, receivers = 40, 4
		stop := uv.UvtServe(t, u)
		ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
		defer cancel()
		from, to := ipcPair(t, u)

		var mu sync.Mutex
		var taken, wrong int
		received := make(chan struct{}, passes)
		ends := make(chan error, receivers)
		for i := range receivers {
			go func() {
				rng := rand.New(rand.NewPCG(uint64(i), 3))
				for {
					rctx, rcancel := randomCtx(ctx, rng)
					got, err := to.Receive(rctx)
					rcancel()
					switch {
					case err == nil && got.IO != nil:
						mu.Lock()
						taken++
						mu.Unlock()
						got.IO.Write([]byte{'k'})
						got.IO.Close()
						received <- struct{}{}
					case err == nil:
						mu.Lock()
						wrong++
						mu.Unlock()
						got.Close()
					case errors.Is(err, context.Canceled):
					default:
						ends <- err
						return
					}
				}
			}()
		}
		reads := make(chan string, passes)
		for range passes {
			a, b, err := uv.Pipe(u.Reactor)
			uv.UvtMust(t, err)
			uv.UvtMust(t, from.SendIO(ctx, a))
			a.Close() // the peer's end is the one passed
			go func() {
				defer b.Close()
				buf := make([]byte, 1)
				n, err := b.Read(buf)
				switch {
				case n == 1:
					reads <- string(buf)
				case errors.Is(err, io.EOF), errors.Is(err, syscall.ECONNRESET):
					reads <- "end"
				default:
					reads <- err.Error()
				}
			}()
		}
		for range passes / 2 {
			uv.UvtRecv(t, received, "a connection received")
		}
		uv.UvtMust(t, to.Close())
		for range receivers {
			if err := uv.UvtRecv(t, ends, "a Receive's end"); !errors.Is(err, uv.ErrClosed) {
				t.Errorf("Receive after the IPC's Close = %v, want ErrClosed", err)
			}
		}
		got := map[string]int{}
		for range passes {
			got[uv.UvtRecv(t, reads, "a peer's read")]++
		}
		mu.Lock()
		defer mu.Unlock()
		if wrong > 0 {
			t.Errorf("%d Receives returned nothing with a nil error", wrong)
		}
		want := map[string]int{"k": taken}
		if taken < passes {
			want["end"] = passes - taken
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("what the peers read, %d connections received (-want +got):\n%s", taken, diff)
		}
		from.Close()
		stop()
		uv.UvtShutdown(t, u, false)
	})
}

// ipcPair opens an IPC on each end of a Unix socket pair.
func ipcPair(t *testing.T, u *uv.UvtReactor) (from, to *uv.IPC) {
	t.Helper()
	fds, err := uv.UvtSocketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	uv.UvtMust(t, err)
	from, err = uv.OpenIPC(u.Reactor, fds[0])
	uv.UvtMust(t, err)
	to, err = uv.OpenIPC(u.Reactor, fds[1])
	uv.UvtMust(t, err)
	return from, to
}
