package reactor_test

import (
	"context"
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
)

// Timers at the edges of time.Duration, each on its own reactor beside an
// ordinary 1 ms timer: a timeout near math.MaxInt64 must not overflow into
// the past and fire at once, must not keep the ordinary timer from firing,
// DueIn must stay non-negative, and Close must end (it closes started
// timers).
func TestTimerHugeDurations(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		cases := []struct {
			name            string
			timeout, repeat time.Duration
			reset           time.Duration
			wantFired       int32
		}{
			{"timeout MaxInt64", math.MaxInt64, 0, 0, 0},
			{"timeout 1<<62", 1 << 62, 0, 0, 0},
			{"timeout 1<<61", 1 << 61, 0, 0, 0},
			{"Reset MaxInt64", time.Hour, 0, math.MaxInt64, 0},
			{"repeat MaxInt64 after 0", 0, math.MaxInt64, 0, 1},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				r, err := reactor.New(reactor.Options{Driver: d, OnReport: func(event.Event, string, error) {}})
				if err != nil {
					t.Fatal(err)
				}
				var fired, ordinary atomic.Int32
				tm, err := r.NewTimer(c.timeout, c.repeat)
				if err != nil {
					t.Logf("refused: %v", err)
					r.Close()
					return
				}
				event.Subscribe(tm, func(_ event.Event, _ any, err error) {
					if err == nil {
						fired.Add(1)
					}
				})
				if err := tm.Start(); err != nil {
					t.Fatalf("Start: %v", err)
				}
				if c.reset != 0 {
					if err := tm.Reset(c.reset); err != nil {
						t.Logf("Reset refused: %v", err)
					}
				}
				o, _ := r.NewTimer(time.Millisecond, 0)
				event.Subscribe(o, func(_ event.Event, _ any, err error) {
					if err == nil {
						ordinary.Add(1)
					}
				})
				o.Start()
				turns := make(chan struct{})
				go func() {
					defer close(turns)
					ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
					defer cancel()
					for ctx.Err() == nil {
						r.RunOnce(ctx)
					}
				}()
				select {
				case <-turns:
				case <-time.After(ownSafety):
					t.Fatalf("RunOnce ignored its context")
				}
				if got := fired.Load(); got != c.wantFired {
					t.Errorf("fired %d times in 100 ms, want %d", got, c.wantFired)
				}
				if ordinary.Load() != 1 {
					t.Errorf("the ordinary 1 ms timer fired %d times beside it, want 1", ordinary.Load())
				}
				if due := tm.DueIn(); due < 0 {
					t.Errorf("DueIn = %v, negative", due)
				}
				onGoroutineOrReport(t, "Close with the timer started", func() { r.Close() })
			})
		}
	})
}

// onGoroutineOrReport is onGoroutine that reports a hang without failing
// fatally (the hung goroutine is left behind: its test has failed).
func onGoroutineOrReport(t *testing.T, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); fn() }()
	select {
	case <-done:
	case <-time.After(ownSafety):
		t.Errorf("%s: hang after %v", what, ownSafety)
	}
}
