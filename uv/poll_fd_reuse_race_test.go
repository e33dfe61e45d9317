package uv_test

import (
	"context"
	"errors"
	"os"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// reuseFD opens a descriptor of some kind, to take a number just closed.
type reuseFD struct {
	name string
	open func() (int, error)
}

var reuseKinds = []reuseFD{
	{"socket", func() (int, error) { return unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0) }},
	{"pipe", func() (int, error) {
		var p [2]int
		if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
			return -1, err
		}
		unix.Close(p[1])
		return p[0], nil
	}},
	{"eventfd", func() (int, error) { return unix.Eventfd(0, unix.EFD_CLOEXEC) }},
	{"epoll", func() (int, error) { return unix.EpollCreate1(unix.EPOLL_CLOEXEC) }},
	{"/dev/null", func() (int, error) { return unix.Open(os.DevNull, unix.O_RDONLY|unix.O_CLOEXEC, 0) }},
}

// turns runs a few bounded turns of the loop.
func turns(t *testing.T, u *uv.UvtReactor) {
	t.Helper()
	for range 3 {
		ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
		if err := u.RunOnce(ctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
			t.Fatal(err)
		}
		cancel()
	}
}

// A pipe polled through several proxies is closed after the proxies'
// Start, and its number taken by a socket, a pipe, an eventfd, an epoll
// instance or /dev/null before the loop's turn: the process lives, only
// EBADF is heard (on libuv, once by each proxy, and the poll stops, so Run
// ends with nothing active);
// afterwards a proxy's Start is refused with EBADF, Stop does nothing, and
// the poll's and the reactor's Close end clean. Both drivers.
func TestPollDescriptorReusedBetweenStartAndTurn(t *testing.T) {
	for _, k := range reuseKinds {
		t.Run(k.name, func(t *testing.T) {
			uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
				var fds [2]int
				uv.UvtMust(t, unix.Pipe2(fds[:], unix.O_CLOEXEC))
				defer unix.Close(fds[1])
				p, err := uv.NewPoll(u.Reactor, fds[0], uv.Readable|uv.Prioritized|uv.Disconnect, uv.PollOptions{})
				uv.UvtMust(t, err)
				var proxies []*uv.PollProxy
				var counters []*uv.UvtCounter
				for _, m := range []uv.PollEvents{uv.Readable, uv.Prioritized, uv.Readable | uv.Disconnect} {
					x, err := uv.NewPollProxy(p, m)
					uv.UvtMust(t, err)
					uv.UvtMust(t, x.Start())
					proxies = append(proxies, x)
					counters = append(counters, uv.UvtSubscribe(t, x, u.Owner().Owned))
				}
				unix.Close(fds[0])
				nfd, err := k.open()
				uv.UvtMust(t, err)
				defer unix.Close(nfd)
				if nfd != fds[0] {
					t.Logf("the %s took %d, not the number %d: the case is the plain close", k.name, nfd, fds[0])
				}
				turns(t, u)
				for i, c := range counters {
					calls := c.Calls()
					for _, call := range calls {
						if !errors.Is(call.Err, syscall.EBADF) {
							t.Errorf("proxy %d heard %v, %v; want only EBADF", i, call.Result, call.Err)
						}
					}
					if u.Driver() == reactor.DriverLibuv && len(calls) != 1 {
						t.Errorf("proxy %d heard %d notifications, want one EBADF", i, len(calls))
					}
				}
				if u.Driver() == reactor.DriverLibuv {
					if s := event.StateOf(p); s == event.Active {
						t.Errorf("poll %v after EBADF, want it stopped", s)
					}
					// Nothing is left active: Run ends at once, rather than
					// wait for a poll that can never fire.
					ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
					if err := u.Run(ctx); err != nil {
						t.Errorf("Run after EBADF = %v, want nil (no active event left)", err)
					}
					cancel()
					for i, x := range proxies {
						if err := x.Start(); !errors.Is(err, syscall.EBADF) {
							t.Errorf("proxy %d Start after EBADF = %v, want EBADF", i, err)
						}
					}
				}
				for i, x := range proxies {
					if err := x.Stop(); err != nil {
						t.Errorf("proxy %d Stop = %v", i, err)
					}
				}
				turns(t, u)
				for i, x := range proxies {
					if err := x.Close(); err != nil {
						t.Errorf("proxy %d Close = %v", i, err)
					}
				}
				uv.UvtMust(t, p.Close())
				uv.UvtShutdown(t, u, false)
			})
		})
	}
}

// The reactor's Close right after a polled descriptor was closed behind
// its started poll, with no turn between: Close ends clean, the process
// lives. Both drivers.
func TestPollDescriptorClosedThenReactorClose(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		var fds [2]int
		uv.UvtMust(t, unix.Pipe2(fds[:], unix.O_CLOEXEC))
		defer unix.Close(fds[1])
		p, err := uv.NewPoll(u.Reactor, fds[0], uv.Readable, uv.PollOptions{})
		uv.UvtMust(t, err)
		x, err := uv.NewPollProxy(p, uv.Readable)
		uv.UvtMust(t, err)
		uv.UvtMust(t, x.Start())
		uv.UvtMust(t, p.Start())
		unix.Close(fds[0])
		uv.UvtShutdown(t, u, false)
		if err := x.Start(); err == nil {
			t.Errorf("proxy Start after the reactor's Close = nil, want an error")
		}
	})
}

// A poll's Close from another goroutine racing the descriptor's close and
// reuse and the loop's turn: whichever comes first, the process lives, the
// poll ends closed, only EBADF is reported and no handle is left. Both
// drivers.
func TestPollCloseRacingDescriptorCheck(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		for range 100 {
			var fds [2]int
			uv.UvtMust(t, unix.Pipe2(fds[:], unix.O_CLOEXEC))
			p, err := uv.NewPoll(u.Reactor, fds[0], uv.Readable, uv.PollOptions{})
			uv.UvtMust(t, err)
			x, err := uv.NewPollProxy(p, uv.Readable)
			uv.UvtMust(t, err)
			if err := x.Start(); err != nil && !errors.Is(err, syscall.EBADF) {
				t.Fatal(err)
			}
			closed := make(chan struct{})
			go func() {
				defer close(closed)
				p.Close()
			}()
			unix.Close(fds[0])
			efd, err := unix.Eventfd(0, unix.EFD_CLOEXEC)
			uv.UvtMust(t, err)
			<-closed
			unix.Close(efd)
			unix.Close(fds[1])
			if err := x.Start(); !errors.Is(err, event.ErrClosed) && !errors.Is(err, syscall.EBADF) {
				t.Errorf("proxy Start after the poll's Close = %v, want ErrClosed", err)
			}
			x.Close()
		}
		stop()
		// A proxy nobody listens to that hears EBADF (the check came before
		// the Close) reports it as an unhandled error: the program's bug,
		// told; nothing else may be reported.
		for _, r := range u.Reports() {
			if !errors.Is(r.Err, syscall.EBADF) {
				t.Errorf("report %v, want only EBADF", r)
			}
		}
		uv.UvtShutdown(t, u, true)
	})
}
