package reactor_test

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
)

// newOwnReactor returns a reactor on driver d, closed at the test's end.
func newOwnReactor(t *testing.T, d reactor.Driver) *reactor.Reactor {
	t.Helper()
	r, err := reactor.New(reactor.Options{Driver: d, OnReport: func(event.Event, string, error) {}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// runIdle runs r until nothing is active.
func runIdle(t *testing.T, r *reactor.Reactor) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), ownSafety)
	defer cancel()
	if err := r.Run(ctx); err != nil {
		t.Fatalf("Run: %v", err)
	}
}

// A reusable one-shot timer is stopped, not closed, when it fires: Start,
// Reset and Refresh use it again, as libuv's uv_timer_start and Node's
// refresh() do. Again stays libuv's: EINVAL for a timer that does not
// repeat.
func TestTimerReusableStartsAgain(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		r := newOwnReactor(t, d)
		tm, err := r.NewTimer(time.Millisecond, 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := tm.SetReusable(true); err != nil {
			t.Fatal(err)
		}
		var during []event.State
		event.Subscribe(tm, func(ev event.Event, _ any, err error) {
			if err == nil {
				during = append(during, event.StateOf(ev))
			}
		})
		for i, again := range []func() error{
			tm.Start,
			tm.Start,
			func() error { return tm.Reset(2 * time.Millisecond) },
			tm.Refresh,
		} {
			if err := again(); err != nil {
				t.Fatalf("restart #%d: %v", i, err)
			}
			if i == 2 { // Reset of a stopped timer sets the timeout only
				if err := tm.Start(); err != nil {
					t.Fatal(err)
				}
			}
			runIdle(t, r)
			if got := event.StateOf(tm); got != event.Stopped {
				t.Fatalf("after firing #%d: %v, want stopped", i, got)
			}
		}
		want := []event.State{event.Fired, event.Fired, event.Fired, event.Fired}
		if diff := cmp.Diff(want, during); diff != "" {
			t.Errorf("firings (-want +got):\n%s", diff)
		}
		if got := tm.Timeout(); got != 2*time.Millisecond {
			t.Errorf("Timeout after Reset = %v", got)
		}
		if err := tm.Again(); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("Again on a one-shot timer = %v, want EINVAL", err)
		}
		if got := tm.Info(); got != "Timer(timeout=2ms, reusable)" {
			t.Errorf("Info = %q", got)
		}
		tm.Close()
		for name, fn := range map[string]func() error{
			"SetReusable": func() error { return tm.SetReusable(true) }, "Refresh": tm.Refresh, "Start": tm.Start,
		} {
			if err := fn(); !errors.Is(err, event.ErrClosed) {
				t.Errorf("%s after Close = %v, want ErrClosed", name, err)
			}
		}
	})
}

// The model's default is kept: a one-shot timer that is not reusable is
// closed when it fires, and refuses Start and Refresh with ErrClosed.
func TestTimerOneShotDefaultCloses(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		r := newOwnReactor(t, d)
		tm, _ := r.NewTimer(time.Millisecond, 0)
		tm.Start()
		runIdle(t, r)
		for name, fn := range map[string]func() error{"Start": tm.Start, "Refresh": tm.Refresh} {
			if err := fn(); !errors.Is(err, event.ErrClosed) {
				t.Errorf("%s after firing = %v, want ErrClosed", name, err)
			}
		}
	})
}

// Its own callback may start a reusable timer again (an idle timeout
// re-armed on each firing); SetReusable(false) brings the model's close
// back.
func TestTimerReusableRestartedFromItsCallback(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		r := newOwnReactor(t, d)
		tm, _ := r.NewTimer(0, 0)
		tm.SetReusable(true)
		fired := 0
		event.Subscribe(tm, func(ev event.Event, _ any, err error) {
			if err != nil {
				return
			}
			fired++
			if fired == 3 {
				if err := tm.SetReusable(false); err != nil {
					t.Error(err)
				}
			}
			if err := ev.Start(); err != nil && fired < 4 {
				t.Errorf("Start from the callback #%d: %v", fired, err)
			}
		})
		tm.Start()
		runIdle(t, r)
		if fired != 4 {
			t.Errorf("fired %d times, want 4 (three reusable firings, then a closing one)", fired)
		}
		if !tm.Flags().Has(event.Closed) {
			t.Errorf("not closed after a firing with SetReusable(false)")
		}
	})
}

// Refresh of a started timer pushes its deadline back to a full timeout
// from now (Node's refresh()), without firing it.
func TestTimerRefreshPostpones(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		r := newOwnReactor(t, d)
		tm, _ := r.NewTimer(time.Hour, 0)
		fired := false
		event.Subscribe(tm, func(_ event.Event, _ any, err error) { fired = fired || err == nil })
		tm.Start()
		if err := tm.Refresh(); err != nil {
			t.Fatal(err)
		}
		r.RunNoWait(context.Background())
		if fired || event.StateOf(tm) != event.Active {
			t.Errorf("after Refresh: fired=%v, %v; want not fired, active", fired, event.StateOf(tm))
		}
		if due := tm.DueIn(); due <= 59*time.Minute {
			t.Errorf("DueIn after Refresh = %v, want close to an hour", due)
		}
	})
}
