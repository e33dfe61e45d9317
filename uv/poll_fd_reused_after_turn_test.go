package uv_test

import (
	"errors"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/uv"
)

// A polled pipe that epoll has already (a turn ran since its Start) is
// closed behind the poll and its number taken by another pipe. A Start that
// hands the descriptor to epoll again — a proxy's Start that widens the
// mask, or the poll's Start once it stopped — is refused with EBADF on
// both drivers, as a Start after a plain close is: the number no longer
// names the file the poll was made for, and polling the newcomer instead
// would report another file's readiness as this one's.
func TestPollStartAfterDescriptorReused(t *testing.T) {
	for _, c := range []struct {
		name  string
		proxy bool // polled through a proxy (else the poll itself)
		start func(t *testing.T, p *uv.Poll, r *uv.PollProxy) error
	}{
		{"a proxy's Start widening the mask", true, func(t *testing.T, p *uv.Poll, _ *uv.PollProxy) error {
			w, err := uv.NewPollProxy(p, uv.Writable)
			uv.UvtMust(t, err)
			return w.Start()
		}},
		{"the poll's Start after it stopped", false, func(t *testing.T, p *uv.Poll, _ *uv.PollProxy) error {
			uv.UvtMust(t, p.Stop())
			return p.Start()
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
				var fds [2]int
				uv.UvtMust(t, unix.Pipe2(fds[:], unix.O_CLOEXEC))
				p, err := uv.NewPoll(u.Reactor, fds[0], uv.Readable|uv.Writable, uv.PollOptions{})
				uv.UvtMust(t, err)
				var r *uv.PollProxy
				if c.proxy {
					r, err = uv.NewPollProxy(p, uv.Readable)
					uv.UvtMust(t, err)
					uv.UvtMust(t, r.Start())
				} else {
					uv.UvtMust(t, p.Start())
				}
				turns(t, u) // epoll has the descriptor
				unix.Close(fds[0])
				unix.Close(fds[1])
				var other [2]int
				uv.UvtMust(t, unix.Pipe2(other[:], unix.O_CLOEXEC))
				defer unix.Close(other[0])
				defer unix.Close(other[1])
				if other[0] != fds[0] {
					t.Skipf("the new pipe took %v, not the number %d: nothing reused to check", other, fds[0])
				}
				if err := c.start(t, p, r); !errors.Is(err, syscall.EBADF) {
					t.Errorf("Start after the number was reused = %v, want EBADF", err)
				}
				turns(t, u)
				p.Close()
				uv.UvtShutdown(t, u, true)
			})
		})
	}
}
