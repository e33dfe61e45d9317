package uv_test

import (
	"context"
	"errors"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// A descriptor closed by another goroutine after a poll's Start (or a
// change of its mask) and before the loop's turn that hands the change to
// epoll: libuv aborted the process in that turn (epoll_ctl's EBADF). Now
// the poll is stopped and its callbacks hear EBADF, and the reactor goes
// on. On the pure-Go driver the descriptor reached epoll at Start, which
// forgets it silently when it is closed: there is nothing to tell, and the
// rule (docs/kinds.md) is that closing a polled descriptor is the caller's
// bug; only a late EBADF, never a crash or another error, is allowed there.
func TestPollDescriptorClosedBeforeTurn(t *testing.T) {
	for _, c := range []struct {
		name  string
		reuse bool // the closing goroutine opens another pipe, which takes the number
		// start starts polling and returns what hears the poll's
		// reports: the poll, or its proxies once it has some.
		start func(t *testing.T, u *uv.UvtReactor, p *uv.Poll) []event.Event
	}{
		{"Start", false, func(t *testing.T, u *uv.UvtReactor, p *uv.Poll) []event.Event {
			uv.UvtMust(t, p.Start())
			return []event.Event{p}
		}},
		{"Start, the number reused", true, func(t *testing.T, u *uv.UvtReactor, p *uv.Poll) []event.Event {
			uv.UvtMust(t, p.Start())
			return []event.Event{p}
		}},
		{"mask widened by a proxy", false, func(t *testing.T, u *uv.UvtReactor, p *uv.Poll) []event.Event {
			r, err := uv.NewPollProxy(p, uv.Readable)
			uv.UvtMust(t, err)
			uv.UvtMust(t, r.Start())
			uv.UvtMust(t, u.RunNoWait(context.Background())) // epoll has the descriptor
			w, err := uv.NewPollProxy(p, uv.Prioritized)
			uv.UvtMust(t, err)
			uv.UvtMust(t, w.Start())
			return []event.Event{r, w}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
				var fds [2]int
				uv.UvtMust(t, unix.Pipe2(fds[:], unix.O_CLOEXEC))
				defer unix.Close(fds[1])
				p, err := uv.NewPoll(u.Reactor, fds[0], uv.Readable|uv.Prioritized, uv.PollOptions{})
				uv.UvtMust(t, err)
				var counters []*uv.UvtCounter
				for _, ev := range c.start(t, u, p) {
					counters = append(counters, uv.UvtSubscribe(t, ev, u.Owner().Owned))
				}
				closed := make(chan struct{})
				var other [2]int
				var reuseErr error
				go func() { // another goroutine of the program closes it
					defer close(closed)
					unix.Close(fds[0])
					if c.reuse {
						reuseErr = unix.Pipe2(other[:], unix.O_CLOEXEC)
					}
				}()
				<-closed
				if c.reuse {
					uv.UvtMust(t, reuseErr)
					defer unix.Close(other[0])
					defer unix.Close(other[1])
					if other[0] != fds[0] && other[1] != fds[0] {
						t.Logf("the new pipe took %v, not the number %d (taken meanwhile): the case is the plain close", other, fds[0])
					}
				}
				turns(t, u)
				var got []uv.UvtCall
				for _, c := range counters {
					got = append(got, c.Calls()...)
				}
				for _, call := range got {
					if !errors.Is(call.Err, syscall.EBADF) {
						t.Errorf("notification after the close: %v, %v; want only EBADF", call.Result, call.Err)
					}
				}
				if u.Driver() == reactor.DriverLibuv {
					if len(got) != len(counters) {
						t.Fatalf("notifications = %v, want one with EBADF for each of %d", got, len(counters))
					}
					if event.StateOf(p) == event.Active {
						t.Errorf("poll still active after EBADF: %v", event.StateOf(p))
					}
				}
				goesOn(t, u, p, "the closed descriptor")
			})
		})
	}
}
