package reactor

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/uvevent/uvevent/event"
)

// An idle serving reactor wakes nothing: once the watchdog has found the
// loop parked it sleeps, and while nothing happens neither the loop takes a
// turn nor the watchdog looks again, over fifty of its periods (the window
// only gives a periodic wake-up the chance to show: the counts decide).
// When the park ends the watchdog looks again: a callback that then blocks
// the loop is still reported.
func TestIdleReactorWakesNothing(t *testing.T) {
	for _, d := range []Driver{DriverLibuv, DriverGo} {
		t.Run(d.String(), func(t *testing.T) {
			const limit = 4 * time.Millisecond // the watchdog looks every millisecond
			reports := make(chan error, 16)
			r, err := New(Options{Driver: d, BlockedAfter: limit,
				OnReport: func(_ event.Event, _ string, err error) {
					select {
					case reports <- err:
					default:
					}
				}})
			if err != nil {
				t.Skipf("driver %v: %v", d, err)
			}
			defer r.Close()
			ctx, cancel := context.WithCancel(context.Background())
			served := make(chan error, 1)
			go func() { served <- r.Serve(ctx) }()
			defer func() {
				cancel()
				if err := <-served; err != context.Canceled {
					t.Errorf("Serve = %v, want context.Canceled", err)
				}
			}()

			give := time.Now().Add(30 * time.Second)
			for !r.wd.sleeping.Load() || !r.wd.parked.Load() {
				if time.Now().After(give) {
					t.Fatalf("after 30 s the watchdog is not asleep (sleeping=%v, parked=%v)", r.wd.sleeping.Load(), r.wd.parked.Load())
				}
				time.Sleep(time.Millisecond)
			}
			turns, looks := r.stats.iterations.Load(), r.wd.looks.Load()
			time.Sleep(50 * limit / 4)
			if got := r.stats.iterations.Load(); got != turns {
				t.Errorf("the idle loop took %d turns, want 0", got-turns)
			}
			if got := r.wd.looks.Load(); got != looks || !r.wd.sleeping.Load() {
				t.Errorf("the watchdog of an idle loop looked %d times (asleep: %v), want 0 (true)", got-looks, r.wd.sleeping.Load())
			}

			release := make(chan struct{})
			if err := r.Post(func() { <-release }); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-reports:
				if !errors.Is(err, ErrBlocked) {
					t.Errorf("report = %v, want ErrBlocked", err)
				}
			case <-time.After(30 * time.Second):
				t.Error("no report of the blocked loop after 30 s: the watchdog did not wake")
			}
			close(release)
		})
	}
}
