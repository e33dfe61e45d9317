package uv_test

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// A reactor closed while goroutines wait on events of every kind: each
// wait ends with an error (whether it began before the Close or after), and
// none hangs.
func TestFaultCloseWithWaitersOnEveryKind(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		u := uv.UvtNewReactorOn(t, d)
		r := u.Reactor
		stop := uv.UvtServe(t, u)
		defer stop()
		var evs []event.Event
		add := func(ev event.Event, err error) {
			t.Helper()
			uv.UvtMust(t, err)
			evs = append(evs, ev)
		}
		tm, err := r.NewTimer(time.Hour, 0)
		add(tm, err)
		uv.UvtMust(t, tm.Start())
		tr, err := uv.NewTrigger(r)
		add(tr, err)
		uv.UvtMust(t, tr.Start())
		add(event.NewFuture[int](r.Owner()), nil)
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		uv.UvtMust(t, err)
		defer unix.Close(fds[1])
		p, err := uv.NewPoll(r, fds[0], uv.Readable, uv.PollOptions{CloseFD: true})
		add(p, err)
		uv.UvtMust(t, p.Start())
		sig, err := uv.NewSignal(r, syscall.SIGUSR2)
		add(sig, err)
		uv.UvtMust(t, sig.Start())
		proc, err := uv.StartProcess(r, uv.ProcessOptions{Args: []string{"/bin/sleep", "5"}})
		add(proc, err)
		defer proc.Kill(syscall.SIGKILL)
		task, err := uv.QueueTask(r, func(ctx context.Context) (any, error) { <-ctx.Done(); return nil, ctx.Err() })
		add(task, err)
		w, err := uv.NewFSEvent(r, t.TempDir(), uv.FSEventOptions{})
		add(w, err)
		uv.UvtMust(t, w.Start())

		ln, err := uv.Listen(r, "tcp4", "127.0.0.1:0")
		uv.UvtMust(t, err)
		a, b, err := uv.Pipe(r)
		uv.UvtMust(t, err)
		udp, err := uv.ListenUDP(r, "udp4", "127.0.0.1:0")
		uv.UvtMust(t, err)

		errs := make(chan error, len(evs)+3)
		for _, ev := range evs {
			go func() {
				_, err := event.Await(context.Background(), event.Any(), ev)
				errs <- fmt.Errorf("%T: %w", ev, err)
			}()
		}
		go func() { _, err := ln.AcceptIO(context.Background()); errs <- fmt.Errorf("AcceptIO: %w", err) }()
		go func() { _, err := a.Read(make([]byte, 8)); errs <- fmt.Errorf("Read: %w", err) }()
		go func() { _, _, err := udp.ReadFrom(make([]byte, 8)); errs <- fmt.Errorf("ReadFrom: %w", err) }()
		stop()
		uv.UvtMust(t, r.Close())
		for range len(evs) + 3 {
			err := uv.UvtRecv(t, errs, "a waiter's end")
			if err == nil || errorsIsNil(err) {
				t.Errorf("a wait ended without an error: %v", err)
			}
		}
		b.Close()
	})
}

// errorsIsNil reports whether err only wraps nil (a wait that succeeded).
func errorsIsNil(err error) bool {
	u, ok := err.(interface{ Unwrap() error })
	return ok && u.Unwrap() == nil
}
