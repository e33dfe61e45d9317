package uv_test

import (
	"context"
	"errors"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/uv"
)

// A proxy Start that fails (its wider mask refused: the descriptor was
// closed behind the poll) takes nothing: the poll's user, stopping the
// poll they started, stops it — it no longer counts as active, so Run can
// end, and nothing is polled for — instead of the poll staying started for
// a proxy that never was.
func TestPollProxyFailedStartHoldsNothing(t *testing.T) {
	for _, viaDeref := range []bool{false, true} {
		name := map[bool]string{false: "Poll.Stop", true: "Stop of the event behind the poll"}[viaDeref]
		t.Run(name, func(t *testing.T) {
			uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
				fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
				uv.UvtMust(t, err)
				defer unix.Close(fds[1])
				base := u.Stats().Active
				p := newPoll(t, u, fds[0], uv.Readable, uv.PollOptions{})
				uv.UvtMust(t, p.Start())
				uv.UvtMust(t, u.RunNoWait(context.Background()))
				unix.Close(fds[0])
				x := newProxy(t, p, uv.Writable)
				if err := x.Start(); !errors.Is(err, syscall.EBADF) {
					t.Fatalf("proxy Start over a closed descriptor = %v, want EBADF", err)
				}
				if viaDeref {
					uv.UvtMust(t, event.Deref(p).Stop())
				} else {
					uv.UvtMust(t, p.Stop())
				}
				if got := u.Stats().Active; got != base {
					t.Errorf("the poll stopped by its user: %d events active, want %d", got, base)
				}
				if got := uv.UvtPolling(p); got != 0 {
					t.Errorf("the poll stopped by its user: polling for %v, want nothing", got)
				}
				uv.UvtMust(t, p.Close())
				uv.UvtShutdown(t, u, false)
			})
		})
	}
}
