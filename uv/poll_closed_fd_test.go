package uv_test

import (
	"context"
	"errors"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/uv"
)

// A descriptor closed behind a poll, then a Start (or a mask change) and a
// turn: the caller gets EBADF and the reactor keeps running, on both
// drivers (libuv itself aborts the process when epoll refuses a
// descriptor).
func TestPollStartAfterDescriptorClosed(t *testing.T) {
	for _, c := range []struct {
		name string
		run  func(t *testing.T, u *uv.UvtReactor, fd int) (*uv.Poll, error)
	}{
		{"Start", func(t *testing.T, u *uv.UvtReactor, fd int) (*uv.Poll, error) {
			p, err := uv.NewPoll(u.Reactor, fd, uv.Readable, uv.PollOptions{})
			uv.UvtMust(t, err)
			unix.Close(fd)
			return p, p.Start()
		}},
		{"restart", func(t *testing.T, u *uv.UvtReactor, fd int) (*uv.Poll, error) {
			p, err := uv.NewPoll(u.Reactor, fd, uv.Readable, uv.PollOptions{})
			uv.UvtMust(t, err)
			uv.UvtMust(t, p.Start())
			uv.UvtMust(t, u.RunNoWait(context.Background()))
			unix.Close(fd)
			uv.UvtMust(t, p.Stop())
			return p, p.Start()
		}},
		{"proxy widens the mask", func(t *testing.T, u *uv.UvtReactor, fd int) (*uv.Poll, error) {
			p, err := uv.NewPoll(u.Reactor, fd, uv.Readable, uv.PollOptions{})
			uv.UvtMust(t, err)
			r, err := uv.NewPollProxy(p, uv.Readable)
			uv.UvtMust(t, err)
			uv.UvtMust(t, r.Start())
			uv.UvtMust(t, u.RunNoWait(context.Background()))
			unix.Close(fd)
			w, err := uv.NewPollProxy(p, uv.Writable)
			uv.UvtMust(t, err)
			return p, w.Start()
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
				fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
				uv.UvtMust(t, err)
				defer unix.Close(fds[1])
				p, err := c.run(t, u, fds[0])
				if !errors.Is(err, syscall.EBADF) {
					t.Errorf("Start over a closed descriptor = %v, want EBADF", err)
				}
				turns(t, u)
				goesOn(t, u, p, "the refused Start")
			})
		})
	}
}

// goesOn checks that u still runs after what befell the poll p: a trigger
// fires. Then it closes p and shuts u down.
func goesOn(t *testing.T, u *uv.UvtReactor, p *uv.Poll, after string) {
	t.Helper()
	tr := uv.UvtNewTrigger(t, u)
	uv.UvtMust(t, tr.Start())
	uv.UvtMust(t, tr.Send())
	uv.UvtTurnUntil(t, u, "a trigger after "+after, func() bool {
		_, fired := uv.UvtInfoCounts(t, tr)
		return fired > 0
	})
	tr.Close()
	p.Close()
	uv.UvtShutdown(t, u, false)
}
