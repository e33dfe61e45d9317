package reactor_test

import (
	"context"
	"errors"
	"runtime"
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

// A one-shot timer is stopped, not closed, when it fires, as a fired
// uv_timer_t is: Start, Reset (alone, as time.Timer.Reset) and Refresh use
// it again, as libuv's uv_timer_start, time.Timer's Reset and Node's
// refresh() do.
// Again stays libuv's: EINVAL for a timer that does not repeat. Close ends
// it for good.
func TestTimerOneShotStartsAgain(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		r := newOwnReactor(t, d)
		tm, err := r.NewTimer(time.Millisecond, 0)
		if err != nil {
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
		if got := tm.Info(); got != "Timer(timeout=2ms)" {
			t.Errorf("Info = %q", got)
		}
		tm.Close()
		for name, fn := range map[string]func() error{
			"Refresh": tm.Refresh, "Start": tm.Start, "Reset": func() error { return tm.Reset(time.Millisecond) },
		} {
			if err := fn(); !errors.Is(err, event.ErrClosed) {
				t.Errorf("%s after Close = %v, want ErrClosed", name, err)
			}
		}
	})
}

// A wait on a one-shot timer that fired gets that firing at once (no
// hang, no new start); once the timer is started again, a wait is for the
// next firing. A fired timer leaves nothing active: Run returns.
func TestTimerFiredReplaysUntilStarted(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		r := newOwnReactor(t, d)
		tm, _ := r.NewTimer(time.Millisecond, 0)
		if err := tm.Start(); err != nil {
			t.Fatal(err)
		}
		runIdle(t, r)
		ctx, cancel := context.WithTimeout(context.Background(), ownSafety)
		defer cancel()
		outs, err := event.Await(ctx, event.Any(), tm)
		if err != nil || len(outs) != 1 || !outs[0].Done || event.StateOf(tm) != event.Stopped {
			t.Fatalf("Await on a fired timer = %+v, %v, %v; want its firing, still stopped", outs, err, event.StateOf(tm))
		}
		replayed := false
		cb := event.NewCallback(func(event.Event, any, error) { replayed = true })
		if err := tm.Replay(cb); err != nil || !replayed {
			t.Errorf("Replay of a fired timer = %v (called %v), want its firing", err, replayed)
		}
		if err := tm.Start(); err != nil {
			t.Fatal(err)
		}
		if err := tm.Replay(cb); !errors.Is(err, event.ErrNotReplayable) {
			t.Errorf("Replay of a timer started again = %v, want ErrNotReplayable (its wait is for the next firing)", err)
		}
		runIdle(t, r)
		tm.Close() // a fired timer closed has nothing more to give
		if _, err := event.Await(ctx, event.Any(), tm); !errors.Is(err, event.ErrClosed) {
			t.Errorf("Await on a fired timer closed = %v, want ErrClosed", err)
		}
	})
}

// Its own callback may start a one-shot timer again (an idle timeout
// re-armed on each firing); a callback that does not leaves it stopped.
func TestTimerOneShotRestartedFromItsCallback(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		r := newOwnReactor(t, d)
		tm, _ := r.NewTimer(0, 0)
		fired := 0
		event.Subscribe(tm, func(ev event.Event, _ any, err error) {
			if err != nil {
				return
			}
			if fired++; fired < 4 {
				if err := ev.Start(); err != nil {
					t.Errorf("Start from the callback #%d: %v", fired, err)
				}
			}
		})
		tm.Start()
		runIdle(t, r)
		if fired != 4 {
			t.Errorf("fired %d times, want 4 (three restarts from the callback)", fired)
		}
		if got := event.StateOf(tm); got != event.Stopped {
			t.Errorf("after the last firing: %v, want stopped", got)
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

// A one-shot timer that fired, stopped and no longer referenced, is
// collected: the reactor holds only started timers.
func TestTimerFiredDroppedIsCollected(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		r := newOwnReactor(t, d)
		collected := make(chan struct{})
		func() {
			tm, _ := r.NewTimer(time.Millisecond, 0)
			runtime.AddCleanup(tm, func(ch chan struct{}) { close(ch) }, collected)
			if err := tm.Start(); err != nil {
				t.Fatal(err)
			}
		}()
		runIdle(t, r)
		deadline := time.Now().Add(ownSafety)
		for {
			runtime.GC()
			select {
			case <-collected:
				return
			default:
			}
			if time.Now().After(deadline) {
				t.Fatal("a fired, dropped one-shot timer was never collected")
			}
			time.Sleep(time.Millisecond)
		}
	})
}
