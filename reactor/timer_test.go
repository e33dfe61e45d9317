package reactor

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/uvevent/uvevent/event"
)

// timerTestDeadline bounds every wait, only so that a broken test fails
// instead of hanging; no test outcome depends on it.
const timerTestDeadline = 30 * time.Second

// timerTestReactor returns a new reactor. At the end of the test it is
// closed and checked: no C handle was ever left live, and after Close no
// timer is queued, no event counts as active and no handle is recorded.
func timerTestReactor(t *testing.T, opts Options) *Reactor {
	t.Helper()
	r, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() {
		if s := r.Stats(); s.CHandles != 0 {
			t.Errorf("before Close: Stats().CHandles = %d, want 0", s.CHandles)
		}
		if err := r.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		// The loop is gone: read what Stats would have shown directly.
		if r.timers.count != 0 || r.active != 0 || r.handles.Len() != 0 {
			t.Errorf("after Close: %d timers queued, %d active, %d handles; want none",
				r.timers.count, r.active, r.handles.Len())
		}
		if s := r.Stats(); s.CHandles != 0 || s.Timers != 0 {
			t.Errorf("after Close: Stats() = %+v, want no handles and no timers", s)
		}
	})
	return r
}

// timerTestRun runs the loop until it is idle, failing on error.
func timerTestRun(t *testing.T, r *Reactor) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timerTestDeadline)
	defer cancel()
	if err := r.Run(ctx); err != nil {
		t.Fatalf("Run: %v", err)
	}
}

func timerTestNew(t *testing.T, r *Reactor, timeout, repeat time.Duration) *Timer {
	t.Helper()
	tm, err := r.NewTimer(timeout, repeat)
	if err != nil {
		t.Fatalf("NewTimer(%v, %v): %v", timeout, repeat, err)
	}
	return tm
}

func timerTestSub(t *testing.T, ev event.Event, fn event.CallbackFunc) {
	t.Helper()
	if _, err := event.Subscribe(ev, fn); err != nil {
		t.Fatalf("Subscribe: %v", err)
	}
}

func timerTestStart(t *testing.T, ev event.Event) {
	t.Helper()
	if err := ev.Start(); err != nil {
		t.Fatalf("Start %s: %v", ev.Info(), err)
	}
}

func TestTimerOneShotIsClosedBeforeItsCallbacks(t *testing.T) {
	r := timerTestReactor(t, Options{})
	tm := timerTestNew(t, r, time.Millisecond, 0)
	type seen struct {
		Closed   bool
		State    event.State
		LoopRefs int
		Err      error
	}
	var got []seen
	timerTestSub(t, tm, func(ev event.Event, _ any, err error) {
		got = append(got, seen{ev.Flags().Has(event.Closed), event.StateOf(ev), event.LoopRefs(ev), err})
	})
	timerTestStart(t, tm)
	if s, st := r.Stats(), event.StateOf(tm); s.Active != 1 || s.Timers != 1 || st != event.Active {
		t.Errorf("started: Active=%d Timers=%d state=%v, want 1, 1, active", s.Active, s.Timers, st)
	}
	timerTestRun(t, r)
	timerTestRun(t, r) // nothing left: it must not fire again
	want := []seen{{Closed: true, State: event.StateClosed}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("callbacks saw (-want +got):\n%s", diff)
	}
	if err := tm.Start(); !errors.Is(err, event.ErrClosed) {
		t.Errorf("Start on a fired one-shot = %v, want ErrClosed", err)
	}
	if _, err := event.Subscribe(tm, func(event.Event, any, error) {}); !errors.Is(err, event.ErrClosed) {
		t.Errorf("Subscribe on a fired one-shot = %v, want ErrClosed", err)
	}
	if s := r.Stats(); s.Active != 0 || s.Timers != 0 {
		t.Errorf("after firing: Active=%d Timers=%d, want 0, 0", s.Active, s.Timers)
	}
}

func TestTimerPeriodicFiresUntilStoppedFromItsCallback(t *testing.T) {
	r := timerTestReactor(t, Options{})
	tm := timerTestNew(t, r, time.Millisecond, time.Millisecond)
	var calls int
	var during []event.State
	timerTestSub(t, tm, func(ev event.Event, _ any, err error) {
		if errors.Is(err, event.ErrClosed) {
			return // the Close at the end
		}
		calls++
		during = append(during, event.StateOf(ev))
		if err != nil || ev.Flags().Has(event.Closed) {
			t.Errorf("firing %d: err=%v flags=%v, want no error and not closed", calls, err, ev.Flags())
		}
		if calls == 3 {
			if err := ev.Stop(); err != nil {
				t.Errorf("Stop from the callback: %v", err)
			}
		}
	})
	timerTestStart(t, tm)
	ctx, cancel := context.WithTimeout(context.Background(), timerTestDeadline)
	defer cancel()
	var between []event.State
	for n := 0; calls < 3; {
		if err := r.RunOnce(ctx); err != nil {
			t.Fatalf("RunOnce after %d firings: %v", calls, err)
		}
		if calls > n && calls < 3 {
			between = append(between, event.StateOf(tm))
		}
		n = calls
	}
	timerTestRun(t, r) // stopped: returns at once
	if diff := cmp.Diff([]event.State{event.Fired, event.Fired, event.Fired}, during); diff != "" {
		t.Errorf("state inside the callback (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]event.State{event.Active, event.Active}, between); diff != "" {
		t.Errorf("state between firings (-want +got):\n%s", diff)
	}
	if calls != 3 || event.StateOf(tm) != event.Stopped || event.LoopRefs(tm) != 0 {
		t.Errorf("after Stop: calls=%d state=%v loopRefs=%d, want 3, stopped, 0", calls, event.StateOf(tm), event.LoopRefs(tm))
	}
	if err := tm.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}

// SetRepeat(0) in the callback makes the timer one-shot from the firing
// after the next one (the next firing is already scheduled when it runs).
func TestTimerSetRepeatZeroEndsPeriodic(t *testing.T) {
	r := timerTestReactor(t, Options{})
	tm := timerTestNew(t, r, time.Millisecond, time.Millisecond)
	var closed []bool
	timerTestSub(t, tm, func(ev event.Event, _ any, err error) {
		closed = append(closed, ev.Flags().Has(event.Closed))
		if len(closed) == 1 {
			if err := tm.SetRepeat(0); err != nil {
				t.Errorf("SetRepeat(0): %v", err)
			}
		}
	})
	timerTestStart(t, tm)
	timerTestRun(t, r)
	if diff := cmp.Diff([]bool{false, true}, closed); diff != "" {
		t.Errorf("firings, closed or not (-want +got):\n%s", diff)
	}
}

func TestTimerStopThenStartAgain(t *testing.T) {
	r := timerTestReactor(t, Options{})
	tm := timerTestNew(t, r, time.Millisecond, 0)
	calls := 0
	timerTestSub(t, tm, func(event.Event, any, error) { calls++ })
	timerTestStart(t, tm)
	if err := tm.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if s := r.Stats(); event.StateOf(tm) != event.Stopped || s.Timers != 0 || s.Active != 0 {
		t.Errorf("stopped: state=%v Timers=%d Active=%d, want stopped, 0, 0", event.StateOf(tm), s.Timers, s.Active)
	}
	timerTestRun(t, r)
	if calls != 0 {
		t.Fatalf("a stopped timer fired %d times", calls)
	}
	timerTestStart(t, tm)
	timerTestRun(t, r)
	if calls != 1 || event.StateOf(tm) != event.StateClosed {
		t.Errorf("restarted: calls=%d state=%v, want 1, closed", calls, event.StateOf(tm))
	}
}

// Reset on a started timer re-arms it from now: the order against another
// timer shows the new deadline. Setting up inside one Exec gives every
// Start and Reset the same loop time, so the order is exact.
func TestTimerResetRearms(t *testing.T) {
	for _, tc := range []struct {
		name  string
		reset time.Duration // 0: no reset
		want  []string
	}{
		{"no reset", 0, []string{"a", "b"}},
		{"reset later than b", 200 * time.Millisecond, []string{"b", "a"}},
		{"reset earlier still", 2 * time.Millisecond, []string{"a", "b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := timerTestReactor(t, Options{})
			a := timerTestNew(t, r, 10*time.Millisecond, 0)
			b := timerTestNew(t, r, 40*time.Millisecond, 0)
			var order []string
			timerTestSub(t, a, func(event.Event, any, error) { order = append(order, "a") })
			timerTestSub(t, b, func(event.Event, any, error) { order = append(order, "b") })
			var errs []error
			r.Exec(func() {
				errs = append(errs, a.Start(), b.Start())
				if tc.reset > 0 {
					errs = append(errs, a.Reset(tc.reset))
				}
			})
			if err := errors.Join(errs...); err != nil {
				t.Fatal(err)
			}
			timerTestRun(t, r)
			if diff := cmp.Diff(tc.want, order); diff != "" {
				t.Errorf("firing order (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTimerResetWhenNotStartedOrClosed(t *testing.T) {
	r := timerTestReactor(t, Options{})
	tm := timerTestNew(t, r, 50*time.Millisecond, 0)
	if err := tm.Reset(70 * time.Millisecond); err != nil {
		t.Fatalf("Reset on a timer never started: %v", err)
	}
	if s := r.Stats(); tm.Info() != "Timer(timeout=70ms)" || event.LoopRefs(tm) != 0 || s.Timers != 0 {
		t.Errorf("after Reset: Info=%q loopRefs=%d Timers=%d, want Timer(timeout=70ms), 0, 0", tm.Info(), event.LoopRefs(tm), s.Timers)
	}
	tm.Close()
	if err := tm.Reset(time.Millisecond); !errors.Is(err, event.ErrClosed) {
		t.Errorf("Reset on a closed timer = %v, want ErrClosed", err)
	}
}

// A timer with timeout 0 started from a timer callback fires on a later loop
// turn, never in the pass that started it. The sleep puts the loop clock
// well past a's deadline, so that the wheel catches up over several
// milliseconds in the first turn; it cannot make a correct wheel fail.
func TestTimerZeroTimeoutFromCallbackFiresNextTurn(t *testing.T) {
	r := timerTestReactor(t, Options{})
	a := timerTestNew(t, r, time.Millisecond, 0)
	b := timerTestNew(t, r, 0, 0)
	var itA, itB uint64
	timerTestSub(t, a, func(event.Event, any, error) {
		itA = r.Stats().Iterations
		if err := b.Start(); err != nil {
			t.Errorf("starting b from a's callback: %v", err)
		}
	})
	timerTestSub(t, b, func(event.Event, any, error) { itB = r.Stats().Iterations })
	timerTestStart(t, a)
	time.Sleep(20 * time.Millisecond)
	timerTestRun(t, r)
	if itA == 0 || itB == 0 {
		t.Fatalf("a fired at iteration %d, b at %d: both must fire", itA, itB)
	}
	if itB <= itA {
		t.Errorf("b (timeout 0, started by a's callback) fired in iteration %d, a in %d: want a later turn", itB, itA)
	}
}

// Timers started from another goroutine while the loop runs are due at
// once and go to the wheel's ready list; stopping the second from the
// first one's callback must keep it from firing.
func TestTimerStopReadyTimerFromCallback(t *testing.T) {
	r := timerTestReactor(t, Options{})
	kick := timerTestNew(t, r, time.Millisecond, 0)
	a := timerTestNew(t, r, 0, 0)
	b := timerTestNew(t, r, 0, 0)
	end := timerTestNew(t, r, 5*time.Millisecond, 0)
	var order []string
	timerTestSub(t, kick, func(event.Event, any, error) {
		go r.Exec(func() { a.Start(); b.Start() }) // queued: runs after the timers of a turn
	})
	timerTestSub(t, a, func(event.Event, any, error) {
		order = append(order, "a")
		b.Stop()
		end.Start()
	})
	timerTestSub(t, b, func(event.Event, any, error) { order = append(order, "b") })
	timerTestSub(t, end, func(event.Event, any, error) {
		order = append(order, "end")
		r.Stop()
	})
	timerTestStart(t, kick)
	ctx, cancel := context.WithTimeout(context.Background(), timerTestDeadline)
	defer cancel()
	if err := r.Serve(ctx); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if diff := cmp.Diff([]string{"a", "end"}, order); diff != "" {
		t.Errorf("fired (-want +got):\n%s", diff)
	}
	if s := r.Stats(); s.Timers != 0 || event.StateOf(b) != event.Stopped {
		t.Errorf("Stats().Timers = %d, b is %v; want 0, stopped", s.Timers, event.StateOf(b))
	}
	b.Close()
}

func TestTimerHiddenDoesNotKeepRunGoing(t *testing.T) {
	r := timerTestReactor(t, Options{})
	h := timerTestNew(t, r, time.Millisecond, time.Millisecond)
	if err := h.SetHidden(true); err != nil {
		t.Fatal(err)
	}
	ticks := 0
	timerTestSub(t, h, func(event.Event, any, error) { ticks++ })
	timerTestStart(t, h)
	if s := r.Stats(); s.Active != 0 || s.Timers != 1 {
		t.Errorf("hidden started: Active=%d Timers=%d, want 0, 1", s.Active, s.Timers)
	}
	visible := timerTestNew(t, r, 5*time.Millisecond, 0)
	timerTestStart(t, visible)
	if s := r.Stats(); s.Active != 1 {
		t.Errorf("with a visible timer: Active=%d, want 1", s.Active)
	}
	timerTestRun(t, r) // returns once visible has fired, hidden still started
	if event.StateOf(visible) != event.StateClosed || event.LoopRefs(h) != 1 {
		t.Errorf("after Run: visible %v, hidden loopRefs %d; want closed, 1", event.StateOf(visible), event.LoopRefs(h))
	}
	if ticks == 0 {
		t.Error("the hidden periodic timer never fired while the loop ran")
	}
	if err := h.SetHidden(false); err != nil {
		t.Fatal(err)
	}
	if s := r.Stats(); s.Active != 1 {
		t.Errorf("unhidden: Active=%d, want 1", s.Active)
	}
	h.Close()
}

func TestTimerInfo(t *testing.T) {
	r := timerTestReactor(t, Options{})
	for _, tc := range []struct {
		timeout, repeat time.Duration
		hidden          bool
		want            string
	}{
		{50 * time.Millisecond, 50 * time.Millisecond, false, "Timer(timeout=50ms, periodic)"},
		{50 * time.Millisecond, 0, false, "Timer(timeout=50ms)"},
		{50 * time.Millisecond, 10 * time.Millisecond, false, "Timer(timeout=50ms, repeat=10ms)"},
		{50 * time.Millisecond, 50 * time.Millisecond, true, "Timer(timeout=50ms, periodic, hidden)"},
		{50 * time.Millisecond, 0, true, "Timer(timeout=50ms, hidden)"},
		{50 * time.Millisecond, 10 * time.Millisecond, true, "Timer(timeout=50ms, repeat=10ms, hidden)"},
		{0, 0, false, "Timer(timeout=0s)"},
	} {
		tm := timerTestNew(t, r, tc.timeout, tc.repeat)
		tm.SetHidden(tc.hidden)
		if got := tm.Info(); got != tc.want {
			t.Errorf("NewTimer(%v, %v) hidden=%v: Info() = %q, want %q", tc.timeout, tc.repeat, tc.hidden, got, tc.want)
		}
	}
}

func TestTimerStartStopCloseRules(t *testing.T) {
	r := timerTestReactor(t, Options{})
	tm := timerTestNew(t, r, time.Millisecond, 0)
	var errs []error
	timerTestSub(t, tm, func(_ event.Event, _ any, err error) { errs = append(errs, err) })

	if err := tm.Stop(); err != nil || event.StateOf(tm) != event.Created || event.LoopRefs(tm) != 0 {
		t.Errorf("Stop when not started: err=%v state=%v loopRefs=%d, want nil, created, 0", err, event.StateOf(tm), event.LoopRefs(tm))
	}
	timerTestStart(t, tm)
	timerTestStart(t, tm)
	if n := event.LoopRefs(tm); n != 2 {
		t.Errorf("Start twice: LoopRefs = %d, want 2", n)
	}
	tm.Stop()
	if s := r.Stats(); event.LoopRefs(tm) != 1 || s.Timers != 1 || s.Active != 1 {
		t.Errorf("one Stop of two Starts: loopRefs=%d Timers=%d Active=%d, want 1, 1, 1", event.LoopRefs(tm), s.Timers, s.Active)
	}
	timerTestRun(t, r)
	if diff := cmp.Diff([]error{nil}, errs, cmp.Comparer(func(a, b error) bool { return a == b })); diff != "" {
		t.Errorf("still armed after one Stop: notifications (-want +got):\n%s", diff)
	}
	if err := tm.Replay(event.NewCallback(func(event.Event, any, error) {})); !errors.Is(err, event.ErrNotReplayable) {
		t.Errorf("Replay = %v, want ErrNotReplayable", err)
	}

	// Close twice on a started timer: one ErrClosed notification.
	c := timerTestNew(t, r, time.Hour, 0)
	var cerrs []error
	timerTestSub(t, c, func(_ event.Event, _ any, err error) { cerrs = append(cerrs, err) })
	timerTestStart(t, c)
	if err1, err2 := c.Close(), c.Close(); err1 != nil || err2 != nil {
		t.Errorf("Close twice: %v, %v; want nil, nil", err1, err2)
	}
	if len(cerrs) != 1 || !errors.Is(cerrs[0], event.ErrClosed) {
		t.Errorf("Close told the subscriber %v, want one ErrClosed", cerrs)
	}

	// Dispose of the last reference of a started timer closes it.
	d := timerTestNew(t, r, time.Hour, 0)
	var derrs []error
	timerTestSub(t, d, func(_ event.Event, _ any, err error) { derrs = append(derrs, err) })
	timerTestStart(t, d)
	d.Dispose()
	if s := r.Stats(); len(derrs) != 1 || !errors.Is(derrs[0], event.ErrClosed) || s.Timers != 0 || s.Active != 0 {
		t.Errorf("Dispose: subscriber got %v, Timers=%d Active=%d; want one ErrClosed, 0, 0", derrs, s.Timers, s.Active)
	}
}

func TestTimerNegativeDurationsAreRefused(t *testing.T) {
	r := timerTestReactor(t, Options{})
	calls := []struct {
		name string
		call func(tm *Timer) error
	}{
		{"NewTimer timeout", func(*Timer) error { _, err := r.NewTimer(-time.Millisecond, 0); return err }},
		{"NewTimer repeat", func(*Timer) error { _, err := r.NewTimer(0, -time.Nanosecond); return err }},
		{"Reset", func(tm *Timer) error { return tm.Reset(-time.Second) }},
		{"SetRepeat", func(tm *Timer) error { return tm.SetRepeat(-1) }},
	}
	probe := timerTestNew(t, r, time.Hour, 0)
	timerTestStart(t, probe)
	// Call them from a callback, while the loop runs.
	first := timerTestNew(t, r, time.Millisecond, 0)
	second := timerTestNew(t, r, 2*time.Millisecond, 0)
	got := map[string]error{}
	fired := false
	timerTestSub(t, first, func(event.Event, any, error) {
		for _, c := range calls {
			got[c.name] = c.call(probe)
		}
		if err := second.Start(); err != nil {
			t.Errorf("starting a timer after the refusals: %v", err)
		}
	})
	timerTestSub(t, second, func(event.Event, any, error) { fired = true; probe.Close() })
	timerTestStart(t, first)
	timerTestRun(t, r)
	for _, c := range calls {
		if err := got[c.name]; !errors.Is(err, syscall.EINVAL) {
			t.Errorf("%s with a negative duration = %v, want EINVAL", c.name, err)
		}
	}
	if !fired {
		t.Error("the reactor did not fire a timer after the refusals")
	}
	if got := probe.Info(); got != "Timer(timeout=1h0m0s)" {
		t.Errorf("refused calls changed the timer: Info() = %q", got)
	}
}

func TestTimerAwaitClosedOneShot(t *testing.T) {
	r := timerTestReactor(t, Options{})
	tm := timerTestNew(t, r, 0, 0)
	timerTestStart(t, tm)
	timerTestRun(t, r)
	ctx, cancel := context.WithTimeout(context.Background(), timerTestDeadline)
	defer cancel()
	outs, err := event.Await(ctx, event.Any(), tm)
	if !errors.Is(err, event.ErrClosed) {
		t.Errorf("Await = %v, want ErrClosed", err)
	}
	if len(outs) != 1 || !errors.Is(outs[0].Err, event.ErrClosed) || outs[0].Index != 0 {
		t.Errorf("outcomes = %+v, want one ErrClosed outcome for index 0", outs)
	}
}

// Goroutines create, subscribe and start timers while Serve runs the loop:
// every operation takes the queued path, and every timer fires once.
func TestTimerStartedFromOtherGoroutinesFire(t *testing.T) {
	const workers, each = 8, 50
	r := timerTestReactor(t, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), timerTestDeadline)
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- r.Serve(ctx) }()
	counts := make([]int, workers*each) // loop-owned
	total := 0
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				id := w*each + i
				tm, err := r.NewTimer(time.Duration(id%7)*time.Millisecond, 0)
				if err == nil {
					_, err = event.Subscribe(tm, func(event.Event, any, error) {
						counts[id]++
						if total++; total == workers*each {
							r.Stop()
						}
					})
				}
				if err == nil {
					err = tm.Start()
				}
				if err != nil {
					t.Errorf("timer %d: %v", id, err)
				}
			}
		}()
	}
	wg.Wait()
	if err := <-served; err != nil {
		t.Fatalf("Serve: %v (fired %d of %d)", err, total, workers*each)
	}
	for id, n := range counts {
		if n != 1 {
			t.Errorf("timer %d fired %d times, want 1", id, n)
		}
	}
	if s := r.Stats(); s.Queued == 0 {
		t.Error("Stats().Queued = 0: the operations did not take the queued path")
	}
}

func TestTimerPanickingCallbackIsReported(t *testing.T) {
	type report struct {
		ev  event.Event
		msg string
		err error
	}
	var reports []report
	r := timerTestReactor(t, Options{OnReport: func(ev event.Event, msg string, err error) {
		reports = append(reports, report{ev, msg, err})
	}})
	bad := timerTestNew(t, r, time.Millisecond, 0)
	good := timerTestNew(t, r, 3*time.Millisecond, 0)
	var order []string
	timerTestSub(t, bad, func(event.Event, any, error) { order = append(order, "bad"); panic("boom") })
	timerTestSub(t, bad, func(event.Event, any, error) { order = append(order, "bad/2") })
	timerTestSub(t, good, func(event.Event, any, error) { order = append(order, "good") })
	timerTestStart(t, bad)
	timerTestStart(t, good)
	timerTestRun(t, r)
	if diff := cmp.Diff([]string{"bad", "bad/2", "good"}, order); diff != "" {
		t.Errorf("callbacks run (-want +got):\n%s", diff)
	}
	if len(reports) != 1 {
		t.Fatalf("got %d reports, want 1: %+v", len(reports), reports)
	}
	var pe *event.PanicError
	if !errors.As(reports[0].err, &pe) || pe.Value != "boom" || len(pe.Stack) == 0 {
		t.Errorf("report error = %#v, want *event.PanicError{Value: boom} with a stack", reports[0].err)
	}
	if reports[0].ev != event.Event(bad) {
		t.Errorf("report names event %v, want the panicking timer", reports[0].ev)
	}
}

func TestTimerReactorCloseClosesStartedTimers(t *testing.T) {
	r := timerTestReactor(t, Options{})
	var errs [3][]error
	var timers [3]*Timer
	for i, d := range []time.Duration{time.Hour, time.Minute, 0} {
		timers[i] = timerTestNew(t, r, d, d)
		timerTestSub(t, timers[i], func(_ event.Event, _ any, err error) { errs[i] = append(errs[i], err) })
		timerTestStart(t, timers[i])
	}
	if err := r.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	for i, tm := range timers {
		if len(errs[i]) != 1 || !errors.Is(errs[i][0], event.ErrClosed) || !tm.Flags().Has(event.Closed) {
			t.Errorf("timer %d: subscriber got %v, flags %v; want one ErrClosed, Closed", i, errs[i], tm.Flags())
		}
	}
	if err := timers[0].Start(); !errors.Is(err, event.ErrClosed) && !errors.Is(err, ErrReactorClosed) {
		t.Errorf("Start after the reactor closed = %v, want an error", err)
	}
}

// Ten thousand timers with random timeouts all fire, in the order of their
// due millisecond, and in start order within one millisecond.
func TestTimerManyFireInDueOrder(t *testing.T) {
	const n = 10000
	r := timerTestReactor(t, Options{})
	rng := rand.New(rand.NewPCG(7, 11))
	type firing struct {
		due int64
		seq uint32
		id  int
	}
	var fired []firing
	seen := make([]int, n)
	var count atomic.Int64
	for id := range n {
		tm := timerTestNew(t, r, time.Duration(rng.IntN(50))*time.Millisecond, 0)
		timerTestSub(t, tm, func(ev event.Event, _ any, _ error) {
			x := ev.(*Timer)
			fired = append(fired, firing{x.due, x.seq, id})
			seen[id]++
			count.Add(1)
		})
		timerTestStart(t, tm)
	}
	timerTestRun(t, r)
	if got := count.Load(); got != n {
		t.Fatalf("%d of %d timers fired", got, n)
	}
	for id, k := range seen {
		if k != 1 {
			t.Errorf("timer %d fired %d times", id, k)
		}
	}
	for i := 1; i < len(fired); i++ {
		p, c := fired[i-1], fired[i]
		if c.due < p.due || c.due == p.due && int32(c.seq-p.seq) <= 0 {
			t.Fatalf("firing %d: timer %d (due %d, seq %d) after timer %d (due %d, seq %d)",
				i, c.id, c.due, c.seq, p.id, p.due, p.seq)
		}
	}
}
