package uv_test

import (
	"context"
	"errors"
	"syscall"
	"testing"

	"github.com/uvevent/uvevent/eventkind"
	"github.com/uvevent/uvevent/uv"
)

// TestIPCReceiveWaits: a Receive whose context ends while it waits
// returns the context's error and the handle passed later goes to the
// next Receive; a Receive waiting while its IPC closes returns ErrClosed;
// so does a Receive once the reactor is closed.
func TestIPCReceiveWaits(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
		defer cancel()
		fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
		uv.UvtMust(t, err)
		from, err := uv.OpenIPC(u.Reactor, fds[0])
		uv.UvtMust(t, err)
		to, err := uv.OpenIPC(u.Reactor, fds[1])
		uv.UvtMust(t, err)

		waiting := func(p *uv.IPC) func() bool {
			return func() bool { return eventkind.LoopRefs(p) > 0 }
		}
		receive := func(ctx context.Context) <-chan error {
			errs := make(chan error, 1)
			go func() {
				got, err := to.Receive(ctx)
				got.Close()
				errs <- err
			}()
			return errs
		}

		wctx, wcancel := context.WithCancel(ctx)
		errs := receive(wctx)
		uv.UvtWaitFor(t, "the Receive to start the IPC", waiting(to))
		wcancel()
		if err := uv.UvtRecv(t, errs, "the cancelled Receive"); !errors.Is(err, context.Canceled) {
			t.Errorf("Receive cancelled while waiting = %v, want context.Canceled", err)
		}

		a, b, err := uv.Pipe(u.Reactor)
		uv.UvtMust(t, err)
		uv.UvtMust(t, from.SendIO(ctx, a))
		got, err := to.Receive(ctx)
		uv.UvtMust(t, err)
		if got.IO == nil {
			t.Errorf("Receive after the cancel = %+v, want the IO passed", got)
		}
		got.Close()
		a.Close()
		b.Close()

		// Whether the Close comes before the Receive's wait is queued or
		// after, the Receive hears ErrClosed.
		errs = receive(ctx)
		to.Close()
		if err := uv.UvtRecv(t, errs, "the Receive its IPC's Close ended"); !errors.Is(err, uv.ErrClosed) {
			t.Errorf("Receive while the IPC closes = %v, want ErrClosed", err)
		}

		stop()
		uv.UvtShutdown(t, u, false)
		if _, err := from.Receive(ctx); !errors.Is(err, uv.ErrClosed) {
			t.Errorf("Receive on a closed reactor = %v, want ErrClosed", err)
		}
	})
}
