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

// serveIdle serves a new reactor on driver d until the test ends.
func serveIdle(t *testing.T, d Driver, blockedAfter time.Duration) *Reactor {
	t.Helper()
	r, err := New(Options{Driver: d, BlockedAfter: blockedAfter})
	if err != nil {
		t.Skipf("driver %v: %v", d, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- r.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != context.Canceled {
			t.Errorf("Serve = %v, want context.Canceled", err)
		}
		r.Close()
	})
	return r
}

// waitWatchdogAsleep waits until the loop is parked and its watchdog asleep.
func waitWatchdogAsleep(t *testing.T, r *Reactor) {
	t.Helper()
	give := time.Now().Add(30 * time.Second)
	for !r.wd.sleeping.Load() || !r.wd.parked.Load() {
		if time.Now().After(give) {
			t.Fatalf("after 30 s the watchdog is not asleep (sleeping=%v, parked=%v)", r.wd.sleeping.Load(), r.wd.parked.Load())
		}
		time.Sleep(time.Millisecond)
	}
}

// A lone call from another goroutine to an idle serving reactor costs its
// watchdog no look: roused by the loop's wake-up, the watchdog waits for
// the loop's next park and goes back to sleep there, so that no timer
// fires after the loop's last turn; nor does one after the reactor started
// serving. (Its period is a second here: only a turn that took that long
// would let it look first.)
func TestLoneCallCostsTheWatchdogNoLook(t *testing.T) {
	for _, d := range []Driver{DriverLibuv, DriverGo} {
		t.Run(d.String(), func(t *testing.T) {
			r := serveIdle(t, d, 4*time.Second)
			waitWatchdogAsleep(t, r)
			if got := r.wd.looks.Load(); got != 0 {
				t.Errorf("after the start the watchdog looked %d times, want 0", got)
			}
			rouses := r.wd.rouses.Load()
			if err := r.Call(func() {}); err != nil {
				t.Fatal(err)
			}
			waitWatchdogAsleep(t, r)
			if got := r.wd.rouses.Load() - rouses; got != 1 {
				t.Errorf("the call roused the watchdog %d times, want 1", got)
			}
			if got := r.wd.looks.Load(); got != 0 {
				t.Errorf("after a lone call the watchdog looked %d times, want 0", got)
			}
		})
	}
}

// Calls in a row keep the watchdog ticking rather than rousing it at every
// wake-up of the loop: over a hundred calls within one of its periods (an
// hour here) the loop rouses it at most twice (the first call, and the
// second if the watchdog went back to sleep after the first).
func TestCallsInARowRouseTheWatchdogAtMostTwice(t *testing.T) {
	for _, d := range []Driver{DriverLibuv, DriverGo} {
		t.Run(d.String(), func(t *testing.T) {
			r := serveIdle(t, d, 4*time.Hour)
			rouses := r.wd.rouses.Load()
			for range 100 {
				if err := r.Call(func() {}); err != nil {
					t.Fatal(err)
				}
			}
			if got := r.wd.rouses.Load() - rouses; got > 2 {
				t.Errorf("100 calls in a row roused the watchdog %d times, want at most 2", got)
			}
		})
	}
}
