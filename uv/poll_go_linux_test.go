package uv

import (
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
)

// What epoll reports, turned into libuv's report by libuv's rules: masked
// by what is polled for, error or hang-up alone standing for everything
// polled for, an error without priority data ending polling with EBADF.
func TestEpollReport(t *testing.T) {
	const (
		in, out, pri, rdhup = unix.EPOLLIN, unix.EPOLLOUT, unix.EPOLLPRI, unix.EPOLLRDHUP
		err, hup            = unix.EPOLLERR, unix.EPOLLHUP
	)
	type report struct {
		Status int32
		Res    PollEvents
		OK     bool
	}
	ebadf := -int32(syscall.EBADF)
	for _, tc := range []struct {
		name     string
		events   uint32
		watching PollEvents
		want     report
	}{
		{"readable", in, Readable, report{0, Readable, true}},
		{"masked to what is polled for", in | out, Writable, report{0, Writable, true}},
		{"nothing polled for fired", out, Readable, report{}},
		{"every condition", in | out | pri | rdhup, allPollEvents, report{0, allPollEvents, true}},
		{"peer closed", in | rdhup | hup, Readable | Disconnect, report{0, Readable | Disconnect, true}},
		{"hang-up alone is all polled for", hup, Readable | Writable, report{0, Readable | Writable, true}},
		{"error alone is EBADF", err, Readable, report{ebadf, 0, true}},
		{"error with writable is EBADF", err | out, Writable, report{ebadf, 0, true}},
		{"error with priority data is not", err | pri, Prioritized, report{0, Prioritized, true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got report
			status, res, ok := epollReport(tc.events, tc.watching)
			got = report{status, PollEvents(res), ok}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("epollReport(%#x, %v) (-want +got):\n%s", tc.events, tc.watching, diff)
			}
		})
	}
}

// The reactor's poller is made with its first poll and closed, its
// descriptors with it, with its last; the reactor's Close closes the polls
// left, and the poller with them.
func TestGoPollerLifetime(t *testing.T) {
	u := UvtNewReactorOn(t, reactor.DriverGo)
	fds := goPollPair(t)
	if uvtPoller(u) != nil {
		t.Fatal("a reactor without polls has a poller")
	}
	a, err := NewPoll(u.Reactor, fds[0], Readable, PollOptions{})
	UvtMust(t, err)
	pl := uvtPoller(u)
	b, err := NewPoll(u.Reactor, fds[1], Writable, PollOptions{})
	UvtMust(t, err)
	if uvtPoller(u) != pl || UvtPolls(u) != 2 {
		t.Fatalf("two polls: poller %p then %p, %d polls; want one poller, 2 polls", pl, uvtPoller(u), UvtPolls(u))
	}
	UvtMust(t, a.Close())
	if uvtPoller(u) != pl {
		t.Fatal("the poller went with a poll left")
	}
	UvtMust(t, b.Close())
	if uvtPoller(u) != nil {
		t.Fatal("the poller outlived its last poll")
	}
	if !pl.closed || pl.epfd != -1 || pl.evfd != -1 {
		t.Fatalf("the poller outlived its last poll: closed %v, descriptors %d and %d", pl.closed, pl.epfd, pl.evfd)
	}

	c, err := NewPoll(u.Reactor, fds[0], Readable, PollOptions{})
	UvtMust(t, err)
	UvtMust(t, c.Start())
	pl = uvtPoller(u)
	UvtShutdown(t, u, false)
	if !c.Flags().Has(event.Closed) {
		t.Error("the reactor's Close left a poll open")
	}
	if !pl.closed || pl.epfd != -1 {
		t.Fatal("the poller outlived the reactor")
	}
}

// A callback that panics does not wedge the poller: the panic is reported,
// and readiness still reaches the loop on later passes.
func TestGoPollerPanicInCallback(t *testing.T) {
	u := UvtNewReactorOn(t, reactor.DriverGo)
	fds := goPollPair(t)
	p, err := NewPoll(u.Reactor, fds[0], Writable, PollOptions{})
	UvtMust(t, err)
	n := 0
	event.Subscribe(p, func(_ event.Event, _ any, err error) {
		if err == nil {
			n++
			if n == 1 {
				panic("boom")
			}
		}
	})
	UvtMust(t, p.Start())
	UvtTurnUntil(t, u, "a notification after the panic", func() bool { return n >= 2 })
	UvtMust(t, p.Close())
	UvtShutdown(t, u, true)
	var pe *event.PanicError
	if reps := u.Reports(); len(reps) == 0 || !errors.As(reps[0].Err, &pe) {
		t.Errorf("reports %v, want the panic", reps)
	}
}

// goPollPair returns a connected pair of stream sockets, closed at the end
// of the test.
func goPollPair(t *testing.T) [2]int {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	UvtMust(t, err)
	t.Cleanup(func() { unix.Close(fds[0]); unix.Close(fds[1]) })
	return fds
}

// Reactors driven by different goroutines make and close polls at the same
// time: each has its own poller (run with -race).
func TestGoPollersOfManyReactors(t *testing.T) {
	const reactors, rounds = 4, 50
	done := make(chan error, reactors)
	var us []*UvtReactor
	var stops []func()
	for range reactors {
		u := UvtNewReactorOn(t, reactor.DriverGo)
		fds := goPollPair(t)
		us, stops = append(us, u), append(stops, UvtServe(t, u))
		go func() { done <- pollRounds(u, fds[0], rounds) }()
	}
	for range reactors {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
	for i, u := range us {
		stops[i]()
		UvtShutdown(t, u, false)
	}
	goPollers.Lock()
	left := len(goPollers.m)
	goPollers.Unlock()
	if left != 0 {
		t.Errorf("%d pollers left with every reactor closed", left)
	}
}

// pollRounds makes, fires and closes a poll for fd on u, rounds times.
func pollRounds(u *UvtReactor, fd, rounds int) error {
	for range rounds {
		p, err := NewPoll(u.Reactor, fd, Writable, PollOptions{})
		if err != nil {
			return err
		}
		fired := make(chan struct{}, 1)
		event.Subscribe(p, func(ev event.Event, _ any, err error) {
			if err == nil {
				ev.Stop()
				fired <- struct{}{}
			}
		})
		if err := p.Start(); err != nil {
			return err
		}
		select {
		case <-fired:
		case <-time.After(UvtSafety):
			return errors.New("a started poll of a writable socket did not fire")
		}
		if err := p.Close(); err != nil {
			return err
		}
	}
	return nil
}
