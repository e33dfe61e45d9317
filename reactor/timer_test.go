package reactor

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/eventkind"
)

// timerTestDeadline bounds every wait only so that a broken test fails
// instead of hanging; no outcome depends on it.
const timerTestDeadline = 30 * time.Second

// timerTestReactor returns a new reactor that is closed at the end of the
// test and checked: no live C handle before Close, and after it no queued
// timer, no active event and no recorded handle. (Stats after Close reports
// zeros whatever is left, so the loop state is read directly as well.)
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
		if r.timers.count != 0 || r.active != 0 || r.handles.Len() != 0 {
			t.Errorf("after Close: %d timers, %d active, %d handles; want none", r.timers.count, r.active, r.handles.Len())
		}
		if s := r.Stats(); s.CHandles != 0 || s.Timers != 0 {
			t.Errorf("after Close: Stats() = %+v, want no handles and no timers", s)
		}
	})
	return r
}

func timerTestCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), timerTestDeadline)
	t.Cleanup(cancel)
	return ctx
}

// timerTestRun runs the loop until it is idle.
func timerTestRun(t *testing.T, r *Reactor) {
	t.Helper()
	if err := r.Run(timerTestCtx(t)); err != nil {
		t.Fatalf("Run: %v", err)
	}
}

// timerTestNew creates a timer and, when fn is not nil, subscribes fn.
func timerTestNew(t *testing.T, r *Reactor, timeout, repeat time.Duration, fn event.CallbackFunc) *Timer {
	t.Helper()
	tm, err := r.NewTimer(timeout, repeat)
	if err == nil && fn != nil {
		_, err = event.Subscribe(tm, fn)
	}
	if err != nil {
		t.Fatalf("NewTimer(%v, %v): %v", timeout, repeat, err)
	}
	return tm
}

func timerTestStart(t *testing.T, evs ...event.Event) {
	t.Helper()
	for _, ev := range evs {
		if err := ev.Start(); err != nil {
			t.Fatalf("Start %s: %v", ev.Info(), err)
		}
	}
}

// A one-shot timer that fires is stopped (not closed) before its
// callbacks run, and leaves the wheel at once: nothing is active, nothing
// fires again; a wait on it gets that firing at once; it can be
// subscribed to and started again.
func TestTimerOneShotIsStoppedBeforeItsCallbacks(t *testing.T) {
	r := timerTestReactor(t, Options{})
	type seen struct {
		Closed   bool
		State    event.State
		LoopRefs int
		Err      error
	}
	var got []seen
	tm := timerTestNew(t, r, time.Millisecond, 0, func(ev event.Event, _ any, err error) {
		got = append(got, seen{ev.Flags().Has(event.Closed), event.StateOf(ev), eventkind.LoopRefs(ev), err})
	})
	timerTestStart(t, tm)
	if s, st := r.Stats(), event.StateOf(tm); s.Active != 1 || s.Timers != 1 || st != event.Active {
		t.Errorf("started: Active=%d Timers=%d state=%v, want 1, 1, active", s.Active, s.Timers, st)
	}
	timerTestRun(t, r)
	timerTestRun(t, r) // nothing left: it must not fire again
	if diff := cmp.Diff([]seen{{Closed: false, State: event.Fired}}, got, cmpopts.EquateErrors()); diff != "" {
		t.Errorf("callbacks saw (-want +got):\n%s", diff)
	}
	if s, st := r.Stats(), event.StateOf(tm); s.Active != 0 || s.Timers != 0 || st != event.Stopped {
		t.Errorf("after firing: Active=%d Timers=%d state=%v, want 0, 0, stopped", s.Active, s.Timers, st)
	}
	// Waiting on it now gets its firing at once: no hang, no new start.
	outs, err := event.Await(timerTestCtx(t), event.Any(), tm)
	if err != nil || len(outs) != 1 || !outs[0].Done || outs[0].Err != nil || event.StateOf(tm) != event.Stopped {
		t.Errorf("Await = %+v, %v, %v; want its firing replayed, still stopped", outs, err, event.StateOf(tm))
	}
	if _, err := event.Subscribe(tm, func(event.Event, any, error) {}); err != nil {
		t.Errorf("Subscribe on a fired one-shot = %v, want nil", err)
	}
	if err := tm.Start(); err != nil {
		t.Errorf("Start on a fired one-shot = %v, want nil", err)
	}
	timerTestRun(t, r)
	if len(got) != 2 {
		t.Errorf("fired %d times, want 2 (started again)", len(got))
	}
}

func TestTimerPeriodicFiresUntilStoppedFromItsCallback(t *testing.T) {
	r := timerTestReactor(t, Options{})
	var during, between []event.State
	calls := 0
	tm := timerTestNew(t, r, time.Millisecond, time.Millisecond, func(ev event.Event, _ any, err error) {
		if errors.Is(err, event.ErrClosed) {
			return // the Close at the end
		}
		calls++
		during = append(during, event.StateOf(ev))
		if err != nil || ev.Flags().Has(event.Closed) {
			t.Errorf("firing %d: err=%v flags=%v, want no error, not closed", calls, err, ev.Flags())
		}
		if calls == 3 {
			if err := ev.Stop(); err != nil {
				t.Errorf("Stop from the callback: %v", err)
			}
		}
	})
	timerTestStart(t, tm)
	for n := 0; calls < 3; n = calls {
		if err := r.RunOnce(timerTestCtx(t)); err != nil {
			t.Fatalf("RunOnce after %d firings: %v", calls, err)
		}
		if calls > n && calls < 3 {
			between = append(between, event.StateOf(tm))
		}
	}
	timerTestRun(t, r) // stopped: returns at once
	want := struct{ During, Between []event.State }{
		[]event.State{event.Fired, event.Fired, event.Fired}, []event.State{event.Active, event.Active}}
	if diff := cmp.Diff(want, struct{ During, Between []event.State }{during, between}); diff != "" {
		t.Errorf("states inside the callback and between firings (-want +got):\n%s", diff)
	}
	if calls != 3 || event.StateOf(tm) != event.Stopped || eventkind.LoopRefs(tm) != 0 {
		t.Errorf("after Stop: calls=%d state=%v loopRefs=%d, want 3, stopped, 0", calls, event.StateOf(tm), eventkind.LoopRefs(tm))
	}
	tm.Close()
}

// SetRepeat(0) in the callback makes the timer one-shot from the firing
// after the next one (the next firing is already scheduled when it runs).
func TestTimerSetRepeatZeroEndsPeriodic(t *testing.T) {
	r := timerTestReactor(t, Options{})
	var closed []bool
	var tm *Timer
	tm = timerTestNew(t, r, time.Millisecond, time.Millisecond, func(ev event.Event, _ any, err error) {
		if closed = append(closed, event.StateOf(ev) == event.Fired && eventkind.LoopRefs(ev) == 0); len(closed) == 1 {
			if err := tm.SetRepeat(0); err != nil {
				t.Errorf("SetRepeat(0): %v", err)
			}
		}
	})
	timerTestStart(t, tm)
	timerTestRun(t, r)
	if diff := cmp.Diff([]bool{false, true}, closed); diff != "" {
		t.Errorf("firings, stopped (one-shot) or not (-want +got):\n%s", diff)
	}
}

// Reset on a started timer re-arms it from now: the order against another
// timer shows the new deadline. Setting up inside one Call gives every
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
			var order []string
			a := timerTestNew(t, r, 10*time.Millisecond, 0, func(event.Event, any, error) { order = append(order, "a") })
			b := timerTestNew(t, r, 40*time.Millisecond, 0, func(event.Event, any, error) { order = append(order, "b") })
			var errs []error
			r.Call(func() {
				if errs = append(errs, a.Start(), b.Start()); tc.reset > 0 {
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

// A timer with timeout 0 started from a timer callback fires on a later
// loop turn. The sleep puts the loop clock well past a's deadline, so the
// wheel catches up over several milliseconds in that turn (the case that
// used to fire b at once); it cannot make a correct wheel fail.
func TestTimerZeroTimeoutFromCallbackFiresNextTurn(t *testing.T) {
	r := timerTestReactor(t, Options{})
	var itA, itB uint64
	b := timerTestNew(t, r, 0, 0, func(event.Event, any, error) { itB = r.Stats().Iterations })
	a := timerTestNew(t, r, time.Millisecond, 0, func(event.Event, any, error) {
		itA = r.Stats().Iterations
		if err := b.Start(); err != nil {
			t.Errorf("starting b from a's callback: %v", err)
		}
	})
	timerTestStart(t, a)
	time.Sleep(20 * time.Millisecond)
	timerTestRun(t, r)
	if itA == 0 || itB <= itA {
		t.Errorf("a fired in iteration %d, b (timeout 0, started by a) in %d: want both, b in a later turn", itA, itB)
	}
}

// Timers started from another goroutine while the loop runs are due at
// once and go to the wheel's ready list; stopping the second from the
// first one's callback keeps it from firing.
func TestTimerStopReadyTimerFromCallback(t *testing.T) {
	r := timerTestReactor(t, Options{})
	var order []string
	rec := func(name string) event.CallbackFunc {
		return func(event.Event, any, error) { order = append(order, name) }
	}
	b := timerTestNew(t, r, 0, 0, rec("b"))
	end := timerTestNew(t, r, 5*time.Millisecond, 0, func(event.Event, any, error) { order = append(order, "end"); r.Stop() })
	a := timerTestNew(t, r, 0, 0, func(ev event.Event, _ any, err error) { rec("a")(ev, nil, err); b.Stop(); end.Start() })
	kick := timerTestNew(t, r, time.Millisecond, 0, func(event.Event, any, error) {
		go r.Call(func() { a.Start(); b.Start() }) // queued: runs after the timers of a turn
	})
	timerTestStart(t, kick)
	if err := r.Serve(timerTestCtx(t)); err != nil {
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
	ticks := 0
	h := timerTestNew(t, r, time.Millisecond, time.Millisecond, func(event.Event, any, error) { ticks++ })
	if err := h.SetHidden(true); err != nil {
		t.Fatal(err)
	}
	timerTestStart(t, h)
	if s := r.Stats(); s.Active != 0 || s.Timers != 1 {
		t.Errorf("hidden started: Active=%d Timers=%d, want 0, 1", s.Active, s.Timers)
	}
	visible := timerTestNew(t, r, 5*time.Millisecond, 0, nil)
	timerTestStart(t, visible)
	if s := r.Stats(); s.Active != 1 {
		t.Errorf("with a visible timer: Active=%d, want 1", s.Active)
	}
	timerTestRun(t, r) // returns once visible has fired, hidden still started
	if event.StateOf(visible) != event.Stopped || eventkind.LoopRefs(h) != 1 || ticks == 0 {
		t.Errorf("after Run: visible %v, hidden loopRefs %d, %d ticks; want stopped, 1, some", event.StateOf(visible), eventkind.LoopRefs(h), ticks)
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
	const ms = time.Millisecond
	for _, tc := range []struct {
		timeout, repeat time.Duration
		hidden          bool
		want            string
	}{
		{50 * ms, 50 * ms, false, "Timer(timeout=50ms, periodic)"},
		{50 * ms, 0, false, "Timer(timeout=50ms)"},
		{50 * ms, 10 * ms, false, "Timer(timeout=50ms, repeat=10ms)"},
		{50 * ms, 50 * ms, true, "Timer(timeout=50ms, periodic, hidden)"},
		{50 * ms, 0, true, "Timer(timeout=50ms, hidden)"},
		{50 * ms, 10 * ms, true, "Timer(timeout=50ms, repeat=10ms, hidden)"},
		{0, 0, false, "Timer(timeout=0s)"},
	} {
		tm := timerTestNew(t, r, tc.timeout, tc.repeat, nil)
		tm.SetHidden(tc.hidden)
		if got := tm.Info(); got != tc.want {
			t.Errorf("NewTimer(%v, %v) hidden=%v: Info() = %q, want %q", tc.timeout, tc.repeat, tc.hidden, got, tc.want)
		}
	}
	tm := timerTestNew(t, r, 50*ms, 0, nil)
	if err := tm.Reset(70 * ms); err != nil || tm.Info() != "Timer(timeout=70ms)" || eventkind.LoopRefs(tm) != 1 || r.Stats().Timers != 1 {
		t.Errorf("Reset(70ms) on a timer never started: err=%v Info=%q loopRefs=%d; want nil, Timer(timeout=70ms), armed (Reset starts it, as time.Timer.Reset)", err, tm.Info(), eventkind.LoopRefs(tm))
	}
	tm.Close()
	if err := tm.Reset(ms); !errors.Is(err, event.ErrClosed) {
		t.Errorf("Reset on a closed timer = %v, want ErrClosed", err)
	}
}

func TestTimerStartStopCloseRules(t *testing.T) {
	r := timerTestReactor(t, Options{})
	var errs []error
	tm := timerTestNew(t, r, time.Millisecond, 0, func(_ event.Event, _ any, err error) { errs = append(errs, err) })
	if err := tm.Stop(); err != nil || event.StateOf(tm) != event.Created || eventkind.LoopRefs(tm) != 0 {
		t.Errorf("Stop when not started: err=%v state=%v loopRefs=%d, want nil, created, 0", err, event.StateOf(tm), eventkind.LoopRefs(tm))
	}
	timerTestStart(t, tm) // restart: Start, Stop, Start
	tm.Stop()
	if s := r.Stats(); event.StateOf(tm) != event.Stopped || s.Timers != 0 || s.Active != 0 {
		t.Errorf("stopped: state=%v Timers=%d Active=%d, want stopped, 0, 0", event.StateOf(tm), s.Timers, s.Active)
	}
	timerTestRun(t, r)
	timerTestStart(t, tm, tm)
	if n := eventkind.LoopRefs(tm); n != 2 {
		t.Errorf("Start twice: LoopRefs = %d, want 2", n)
	}
	tm.Stop()
	if s := r.Stats(); eventkind.LoopRefs(tm) != 1 || s.Timers != 1 || s.Active != 1 {
		t.Errorf("one Stop of two Starts: loopRefs=%d Timers=%d Active=%d, want 1, 1, 1", eventkind.LoopRefs(tm), s.Timers, s.Active)
	}
	timerTestRun(t, r)
	if diff := cmp.Diff([]error{nil}, errs, cmpopts.EquateErrors()); diff != "" {
		t.Errorf("fired once, after the restart and still armed after one Stop (-want +got):\n%s", diff)
	}
	if err := tm.Replay(event.NewCallback(func(event.Event, any, error) {})); err != nil {
		t.Errorf("Replay of the fired timer = %v, want its firing", err)
	}
	// Close twice, and Dispose of the last reference, each close a started
	// timer once: one ErrClosed notification, nothing left queued.
	for _, end := range []func(tm *Timer) error{
		func(tm *Timer) error { return errors.Join(tm.Close(), tm.Close()) },
		func(tm *Timer) error { tm.Dispose(); return nil },
	} {
		var got []error
		tm := timerTestNew(t, r, time.Hour, 0, func(_ event.Event, _ any, err error) { got = append(got, err) })
		timerTestStart(t, tm)
		if err := end(tm); err != nil {
			t.Errorf("closing: %v", err)
		}
		if s := r.Stats(); s.Timers != 0 || s.Active != 0 || !tm.Flags().Has(event.Closed) {
			t.Errorf("closed: Timers=%d Active=%d flags=%v; want 0, 0, Closed", s.Timers, s.Active, tm.Flags())
		}
		if diff := cmp.Diff([]error{event.ErrClosed}, got, cmpopts.EquateErrors()); diff != "" {
			t.Errorf("subscriber told (-want +got):\n%s", diff)
		}
	}
}

// Negative durations are refused, called from a callback while the loop
// runs, and the loop goes on: a timer started afterwards fires.
func TestTimerNegativeDurationsAreRefused(t *testing.T) {
	r := timerTestReactor(t, Options{})
	probe := timerTestNew(t, r, time.Hour, 0, nil)
	timerTestStart(t, probe)
	calls := map[string]func() error{
		"NewTimer timeout": func() error { _, err := r.NewTimer(-time.Millisecond, 0); return err },
		"NewTimer repeat":  func() error { _, err := r.NewTimer(0, -time.Nanosecond); return err },
		"Reset":            func() error { return probe.Reset(-time.Second) },
		"SetRepeat":        func() error { return probe.SetRepeat(-1) },
	}
	got := map[string]error{}
	fired := false
	second := timerTestNew(t, r, 2*time.Millisecond, 0, func(event.Event, any, error) { fired = true; probe.Close() })
	first := timerTestNew(t, r, time.Millisecond, 0, func(event.Event, any, error) {
		for name, call := range calls {
			got[name] = call()
		}
		if err := second.Start(); err != nil {
			t.Errorf("starting a timer after the refusals: %v", err)
		}
	})
	timerTestStart(t, first)
	timerTestRun(t, r)
	for name := range calls {
		if !errors.Is(got[name], syscall.EINVAL) {
			t.Errorf("%s with a negative duration = %v, want EINVAL", name, got[name])
		}
	}
	if !fired || probe.Info() != "Timer(timeout=1h0m0s)" {
		t.Errorf("after the refusals: later timer fired=%v, probe %q; want true, unchanged", fired, probe.Info())
	}
}

// A timeout near the largest Duration ("never") must neither fire nor make
// the loop spin: with only that timer armed, Serve parks until Stop comes
// 20ms later, so it turns a few times, not thousands (a count of turns, not
// a clock, decides).
func TestTimerHugeTimeout(t *testing.T) {
	for _, d := range []time.Duration{math.MaxInt64, math.MaxInt64 - 1, 1 << 62} {
		t.Run(d.String(), func(t *testing.T) {
			r := timerTestReactor(t, Options{})
			fired := false
			long := timerTestNew(t, r, d, 0, func(_ event.Event, _ any, err error) { fired = fired || err == nil })
			timerTestStart(t, long)
			go func() { time.Sleep(20 * time.Millisecond); r.Stop() }()
			if err := r.Serve(timerTestCtx(t)); err != nil {
				t.Fatalf("Serve: %v", err)
			}
			if turns := r.Stats().Iterations; fired || turns > 50 {
				t.Errorf("timeout %v: fired=%v, %d loop turns in 20ms; want false, a few", d, fired, turns)
			}
			long.Close()
		})
	}
}

// Goroutines create, subscribe and start timers while Serve runs the loop:
// every operation takes the queued path, and every timer fires once.
func TestTimerStartedFromOtherGoroutinesFire(t *testing.T) {
	const workers, each = 8, 50
	r := timerTestReactor(t, Options{})
	// The workers start once Serve holds the loop (a callback ran in it), so
	// that every operation of theirs is queued, whatever the scheduling.
	serving := make(chan struct{})
	first, err := r.NewTimer(0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := event.Subscribe(first, func(event.Event, any, error) { close(serving) }); err != nil {
		t.Fatal(err)
	}
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- r.Serve(timerTestCtx(t)) }()
	<-serving
	counts, total := make([]int, workers*each), 0 // loop-owned
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for id := w * each; id < (w+1)*each; id++ {
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
				if err != nil { // not t.Fatal: this is not the test's goroutine
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
	// Each worker's Subscribe and Start went through the queue.
	if s := r.Stats(); s.Queued < 2*workers*each {
		t.Errorf("Stats().Queued = %d, want at least %d: the operations did not all take the queued path", s.Queued, 2*workers*each)
	}
}

func TestTimerPanickingCallbackIsReported(t *testing.T) {
	var reports []error
	r := timerTestReactor(t, Options{OnReport: func(ev event.Event, msg string, err error) {
		if ev != event.Event(nil) && ev.Info() != "Timer(timeout=1ms)" {
			t.Errorf("report %q names %s, want the panicking timer", msg, ev.Info())
		}
		reports = append(reports, err)
	}})
	var order []string
	bad := timerTestNew(t, r, time.Millisecond, 0, func(event.Event, any, error) { order = append(order, "bad"); panic("boom") })
	good := timerTestNew(t, r, 3*time.Millisecond, 0, func(event.Event, any, error) { order = append(order, "good") })
	if _, err := event.Subscribe(bad, func(event.Event, any, error) { order = append(order, "bad/2") }); err != nil {
		t.Fatal(err)
	}
	timerTestStart(t, bad, good)
	timerTestRun(t, r)
	if diff := cmp.Diff([]string{"bad", "bad/2", "good"}, order); diff != "" {
		t.Errorf("callbacks run (-want +got):\n%s", diff)
	}
	var pe *event.PanicError
	if len(reports) != 1 || !errors.As(reports[0], &pe) || pe.Value != "boom" || len(pe.Stack) == 0 {
		t.Errorf("reports = %v, want one *event.PanicError{Value: boom} with a stack", reports)
	}
}

func TestTimerReactorCloseClosesStartedTimers(t *testing.T) {
	r := timerTestReactor(t, Options{})
	var errs [3][]error
	var timers [3]*Timer
	for i, d := range []time.Duration{time.Hour, time.Minute, 0} {
		timers[i] = timerTestNew(t, r, d, d, func(_ event.Event, _ any, err error) { errs[i] = append(errs[i], err) })
		timerTestStart(t, timers[i])
	}
	if err := r.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	for i, tm := range timers {
		if diff := cmp.Diff([]error{event.ErrClosed}, errs[i], cmpopts.EquateErrors()); diff != "" || !tm.Flags().Has(event.Closed) {
			t.Errorf("timer %d: flags %v, subscriber told (-want +got):\n%s", i, tm.Flags(), diff)
		}
	}
	if err := timers[0].Start(); err == nil {
		t.Error("Start after the reactor closed succeeded")
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
		id  int // the timers are started in id order
	}
	var fired []firing
	seen := make([]int, n)
	for id := range n {
		tm := timerTestNew(t, r, time.Duration(rng.IntN(50))*time.Millisecond, 0, func(ev event.Event, _ any, _ error) {
			x := ev.(*Timer)
			fired = append(fired, firing{r.timers.dueOf(x), id})
			seen[id]++
		})
		timerTestStart(t, tm)
	}
	timerTestRun(t, r)
	if len(fired) != n {
		t.Fatalf("%d firings for %d timers", len(fired), n)
	}
	for id, k := range seen {
		if k != 1 {
			t.Errorf("timer %d fired %d times", id, k)
		}
	}
	for i := 1; i < len(fired); i++ {
		if p, c := fired[i-1], fired[i]; c.due < p.due || c.due == p.due && c.id <= p.id {
			t.Fatalf("firing %d: timer %d (due %d) after timer %d (due %d)", i, c.id, c.due, p.id, p.due)
		}
	}
}
