package reactor_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
)

type wdReport struct {
	info, msg string
	err       error
}

// A callback that blocks the loop past Options.BlockedAfter is reported
// while it blocks (where, and for how long), Stats answers meanwhile
// without waiting for the loop, and when the callback returns the loop
// reports again with the event, whose Info the handler can read there.
// The callback stays blocked until the first report has arrived: no timing
// decides the test.
func TestWatchdogReportsABlockedCallback(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		reports := make(chan wdReport, 64)
		r, err := reactor.New(reactor.Options{Driver: d, BlockedAfter: 4 * time.Millisecond,
			OnReport: func(ev event.Event, msg string, err error) {
				info := ""
				if ev != nil {
					info = ev.Info() // on the loop goroutine only: see below
				}
				reports <- wdReport{info, msg, err}
			}})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		tm, err := r.NewTimer(0, 0)
		if err != nil {
			t.Fatal(err)
		}
		release := make(chan struct{})
		if _, err := event.Subscribe(tm, func(event.Event, any, error) { <-release }); err != nil {
			t.Fatal(err)
		}
		if err := tm.Start(); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		served := make(chan error, 1)
		go func() { served <- r.Serve(ctx) }()

		first := recvReport(t, reports, "the report of the blocked loop")
		var be *reactor.BlockedError
		if first.info != "" || !errors.Is(first.err, reactor.ErrBlocked) || !errors.As(first.err, &be) {
			t.Fatalf("first report = %+v, want no event and a BlockedError", first)
		}
		if !strings.Contains(be.Where, "watchdog_test.go:") || be.For <= 0 {
			t.Errorf("BlockedError = %+v, want this file's callback and a duration", be)
		}
		s := r.Stats() // must not wait for the blocked loop
		if s.Blocked <= 0 || !s.Running {
			t.Errorf("Stats while blocked: Blocked=%v Running=%v, want > 0 and true", s.Blocked, s.Running)
		}
		close(release)
		// The loop's report names the event. A scheduler that keeps the
		// loop goroutine off its processor past the threshold can make
		// the watchdog report again, without an event, before it.
		second := recvReport(t, reports, "the report after the callback returned")
		for second.info == "" && errors.Is(second.err, reactor.ErrBlocked) {
			second = recvReport(t, reports, "the report after the callback returned")
		}
		if !strings.HasPrefix(second.info, "Timer(") || !errors.Is(second.err, reactor.ErrBlocked) {
			t.Errorf("second report = %+v, want the timer's Info and a BlockedError", second)
		}
		cancel()
		<-served
		if s := r.Stats(); s.Blocked != 0 {
			t.Errorf("Stats after the block: Blocked=%v, want 0", s.Blocked)
		}
	})
}

func recvReport(t *testing.T, ch <-chan wdReport, what string) wdReport {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(30 * time.Second):
		t.Fatalf("no %s", what)
		panic("unreachable")
	}
}
