package event_test

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/eventkind"
)

// loopState is what a loop event looks like from outside.
type loopState struct {
	Refs, Arms, Disarms, Active int
	State                       string
}

func stateOf(s *event.Serial, p *probe) loopState {
	return loopState{eventkind.LoopRefs(p), p.arms, p.disarms, s.Active(), event.StateOf(p).String()}
}

func TestStartStopCounting(t *testing.T) {
	s := &event.Serial{}
	p := newProbe(s, "loop", true, 0)
	var got []loopState
	step := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, stateOf(s, p))
	}
	step(nil)
	step(p.Stop()) // not started: no-op
	step(p.Start())
	step(p.Start()) // only counts
	step(p.Stop())  // not the last
	step(p.Stop())  // the last disarms
	step(p.Stop())  // no-op again
	step(p.Start()) // Stopped can be re-activated
	step(p.Close()) // stops before closing
	want := []loopState{
		{0, 0, 0, 0, "created"},
		{0, 0, 0, 0, "created"},
		{1, 1, 0, 1, "active"},
		{2, 1, 0, 1, "active"},
		{1, 1, 0, 1, "active"},
		{0, 1, 1, 0, "stopped"},
		{0, 1, 1, 0, "stopped"},
		{1, 2, 1, 1, "active"},
		{0, 2, 2, 0, "closed"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Start/Stop sequence (-want +got):\n%s", diff)
	}
	if err := p.Start(); !errors.Is(err, event.ErrClosed) {
		t.Errorf("Start on a closed event = %v, want ErrClosed", err)
	}
	if p.arms != 2 || eventkind.LoopRefs(p) != 0 {
		t.Errorf("Start on a closed event armed it: arms=%d refs=%d", p.arms, eventkind.LoopRefs(p))
	}
}

func TestStartArmFailure(t *testing.T) {
	s := &event.Serial{}
	p := newProbe(s, "bad", true, 0)
	p.armErr = errors.New("no handle")
	if err := p.Start(); !errors.Is(err, p.armErr) {
		t.Fatalf("Start = %v, want the Arm error", err)
	}
	if diff := cmp.Diff(loopState{0, 1, 0, 0, "created"}, stateOf(s, p)); diff != "" {
		t.Errorf("after a failed Start (-want +got):\n%s", diff)
	}
}

func TestLifecyclePeriodic(t *testing.T) {
	s := &event.Serial{}
	p := newProbe(s, "tick", true, 0)
	var during []event.State
	stopNext := false
	event.Subscribe(p, func(ev event.Event, _ any, _ error) {
		during = append(during, event.StateOf(ev))
		if stopNext {
			ev.Stop()
		}
	})
	var after []event.State
	after = append(after, event.StateOf(p))
	p.Start()
	after = append(after, event.StateOf(p))
	p.fire(1, nil)
	after = append(after, event.StateOf(p))
	p.fire(2, nil)
	after = append(after, event.StateOf(p))
	stopNext = true
	p.fire(3, nil)
	after = append(after, event.StateOf(p))
	want := []event.State{event.Created, event.Active, event.Active, event.Active, event.Stopped}
	if diff := cmp.Diff(want, after); diff != "" {
		t.Errorf("states between passes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]event.State{event.Fired, event.Fired, event.Fired}, during); diff != "" {
		t.Errorf("states inside the passes (-want +got):\n%s", diff)
	}
}

func TestCompleteClosesBeforeCallbacks(t *testing.T) {
	s := &event.Serial{}
	p := newProbe(s, "once", true, 0)
	p.Start()
	type seen struct {
		State     event.State
		Closed    bool
		LoopRefs  int
		AddErr    bool
		Result    any
		Active    int
		StartFail bool
	}
	var got []seen
	disposed := 0
	cb := event.NewCallback(func(ev event.Event, r any, _ error) {
		got = append(got, seen{
			State:     event.StateOf(ev),
			Closed:    ev.Flags().Has(event.Closed),
			LoopRefs:  eventkind.LoopRefs(ev),
			AddErr:    errors.Is(ev.AddCallback(event.NewCallback(func(event.Event, any, error) {})), event.ErrClosed),
			Result:    r,
			Active:    s.Active(),
			StartFail: errors.Is(ev.Start(), event.ErrClosed),
		})
	}).OnDispose(func() { disposed++ })
	p.AddCallback(cb)
	cb.Release()
	if err := p.complete("done", nil); err != nil {
		t.Fatal(err)
	}
	want := []seen{{State: event.StateClosed, Closed: true, AddErr: true, Result: "done", StartFail: true}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("what the callback saw (-want +got):\n%s", diff)
	}
	if disposed != 1 || eventkind.Subscribers(p) != 0 {
		t.Errorf("after Complete: disposed=%d subscribers=%d, want 1 and 0", disposed, eventkind.Subscribers(p))
	}
	if err := p.complete("again", nil); !errors.Is(err, event.ErrClosed) {
		t.Errorf("second Complete = %v, want ErrClosed", err)
	}
}

func TestCloseNotifiesAndReleases(t *testing.T) {
	s := &event.Serial{}
	p := newProbe(s, "c", true, 0)
	var got []string
	disposed := 0
	var cbs []*event.Callback
	for i := range 3 {
		cb := event.NewCallback(func(_ event.Event, r any, err error) {
			got = append(got, fmt.Sprint(i, r, errors.Is(err, event.ErrClosed)))
		}).OnDispose(func() { disposed++ })
		p.AddCallback(cb)
		cbs = append(cbs, cb)
	}
	for _, cb := range cbs {
		if cb.Refs() != 2 {
			t.Fatalf("a subscribed callback holds %d references, want 2", cb.Refs())
		}
		cb.Release()
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"0 <nil> true", "1 <nil> true", "2 <nil> true"}, got); diff != "" {
		t.Errorf("close notifications (-want +got):\n%s", diff)
	}
	if disposed != 3 || eventkind.Subscribers(p) != 0 {
		t.Errorf("after Close: disposed=%d subscribers=%d, want 3 and 0", disposed, eventkind.Subscribers(p))
	}
	for i, cb := range cbs {
		if cb.Refs() != 0 {
			t.Errorf("callback %d still holds %d references", i, cb.Refs())
		}
	}
}

// TestCloseInsidePass: the running pass delivers its own notification to
// the rest of the subscribers, then releases them; the kind's memory is
// freed only after the last callback of the pass ran.
func TestCloseInsidePass(t *testing.T) {
	s := &event.Serial{}
	p := newProbe(s, "inner", true, 0)
	var log []string
	p.onFree = func() { log = append(log, fmt.Sprintf("free subs=%d", eventkind.Subscribers(p))) }
	for _, n := range []string{"A", "B", "C"} {
		event.Subscribe(p, func(ev event.Event, r any, err error) {
			log = append(log, fmt.Sprint(n, " ", r, " ", err))
			if n == "A" {
				if err := ev.Close(); err != nil {
					t.Errorf("Close inside the pass: %v", err)
				}
				log = append(log, "closed "+event.StateOf(ev).String())
			}
		})
	}
	p.Start()
	p.fire("tick", nil)
	want := []string{"A tick <nil>", "closed closed", "B tick <nil>", "C tick <nil>", "free subs=0"}
	if diff := cmp.Diff(want, log); diff != "" {
		t.Errorf("close inside a pass (-want +got):\n%s", diff)
	}
	if event.StateOf(p) != event.StateClosed || s.Active() != 0 {
		t.Errorf("after the pass: state=%v active=%d", event.StateOf(p), s.Active())
	}
}

func TestDisposeLastReferenceCloses(t *testing.T) {
	s := &event.Serial{}
	p := newProbe(s, "refs", true, 0)
	var got []error
	event.Subscribe(p, func(_ event.Event, _ any, err error) { got = append(got, err) })
	p.Retain()
	p.Retain()
	p.Dispose()
	p.Dispose()
	if p.Flags().Has(event.Closed) || len(got) != 0 || len(p.frees) != 0 {
		t.Fatalf("Dispose with references left closed the event (flags %v, got %v, frees %v)", p.Flags(), got, p.frees)
	}
	p.Dispose()
	if !p.Flags().Has(event.Closed) || event.StateOf(p) != event.StateClosed {
		t.Errorf("the last Dispose did not close: %v", p.Flags())
	}
	if len(got) != 1 || !errors.Is(got[0], event.ErrClosed) {
		t.Errorf("subscriber got %v, want one ErrClosed", got)
	}
	if diff := cmp.Diff([]bool{true}, p.frees); diff != "" {
		t.Errorf("Free calls (-want +got):\n%s", diff)
	}
}

func TestReplay(t *testing.T) {
	s := &event.Serial{}
	boom := errors.New("boom")
	var got []string
	rec := event.NewCallback(func(_ event.Event, r any, err error) { got = append(got, fmt.Sprint(r, " ", err)) })

	ok := event.NewFuture[any](s)
	if err := ok.Replay(rec); !errors.Is(err, event.ErrNotReplayable) {
		t.Errorf("Replay of a pending future = %v, want ErrNotReplayable", err)
	}
	ok.Resolve(7)
	bad := event.NewFuture[any](s)
	bad.Reject(boom)
	for _, f := range []*event.Future[any]{ok, ok, bad} {
		if err := f.Replay(rec); err != nil {
			t.Errorf("Replay: %v", err)
		}
	}
	if diff := cmp.Diff([]string{"7 <nil>", "7 <nil>", "<nil> boom"}, got); diff != "" {
		t.Errorf("replayed outcomes (-want +got):\n%s", diff)
	}
	if err := ok.AddCallback(rec); !errors.Is(err, event.ErrClosed) {
		t.Errorf("AddCallback on a completed future = %v, want ErrClosed", err)
	}

	p := newProbe(s, "plain", true, 0)
	p.fire("x", nil)
	if err := p.Replay(rec); !errors.Is(err, event.ErrNotReplayable) {
		t.Errorf("Replay of a non-replaying kind = %v, want ErrNotReplayable", err)
	}
	p.Close()
	if err := p.Replay(rec); !errors.Is(err, event.ErrNotReplayable) {
		t.Errorf("Replay of a closed non-replaying kind = %v, want ErrNotReplayable", err)
	}
	if len(got) != 3 {
		t.Errorf("refused replays called the callback: %v", got)
	}
}

func TestNotifyHook(t *testing.T) {
	s := &event.Serial{}
	p := newProbe(s, "hooked", true, 0)
	var got []string
	event.Subscribe(p, func(_ event.Event, r any, err error) { got = append(got, fmt.Sprint(r, " ", err)) })
	timeout := errors.New("timeout")
	var hookSaw []event.Event
	p.SetNotifyHook(func(ev event.Event, r any, err error) (any, error, bool) {
		hookSaw = append(hookSaw, ev)
		switch r {
		case "tick":
			return nil, timeout, true // change result and error
		case "drop":
			return r, err, false // swallow
		}
		return r, err, true
	})
	for _, r := range []string{"tick", "drop", "keep"} {
		if err := p.fire(r, nil); err != nil {
			t.Errorf("Notify(%s) = %v", r, err)
		}
	}
	p.SetNotifyHook(nil)
	p.fire("drop", nil)
	if diff := cmp.Diff([]string{"<nil> timeout", "keep <nil>", "drop <nil>"}, got); diff != "" {
		t.Errorf("callbacks saw (-want +got):\n%s", diff)
	}
	if len(hookSaw) != 3 || hookSaw[0] != event.Event(p) {
		t.Errorf("hook calls = %d (first event %v), want 3 with the probe", len(hookSaw), hookSaw)
	}
}

// TestHookSwallowingCloseStillReleases: whatever the hook decides about the
// last notification, a closed event lets go of its subscribers, closes its
// CloseFD descriptor and frees what the kind holds.
func TestHookSwallowingCloseStillReleases(t *testing.T) {
	for _, how := range []string{"Close", "Complete"} {
		s := &event.Serial{}
		p := newProbe(s, how, true, 0)
		p.SetNotifyHook(func(_ event.Event, r any, err error) (any, error, bool) { return r, err, false })
		disposed := 0
		cb, _ := event.Subscribe(p, func(event.Event, any, error) {})
		cb.OnDispose(func() { disposed++ })
		if how == "Close" {
			p.Close()
		} else {
			p.complete("x", nil)
		}
		if n := eventkind.Subscribers(p); n != 0 || disposed != 1 || len(p.frees) != 1 {
			t.Errorf("%s with a swallowing hook: subscribers=%d disposed=%d frees=%v, want 0, 1, [true]",
				how, n, disposed, p.frees)
		}
	}
}

// TestNotifyAfterClose: Closed is final; a late notification of a closed
// event is refused and neither reopens its state nor frees it twice.
func TestNotifyAfterClose(t *testing.T) {
	s := &event.Serial{}
	p := newProbe(s, "late", true, 0)
	p.Start()
	p.Close()
	err := p.fire("late", nil)
	if !errors.Is(err, event.ErrClosed) {
		t.Errorf("Notify on a closed event = %v, want ErrClosed", err)
	}
	if st := event.StateOf(p); st != event.StateClosed {
		t.Errorf("state after a late Notify = %v, want closed", st)
	}
	if len(p.frees) != 1 {
		t.Errorf("Free called %d times, want once", len(p.frees))
	}
}

func TestPanickingCallbackRecovered(t *testing.T) {
	var reps []report
	s := reportingSerial(&reps)
	p := newProbe(s, "panic", true, 0)
	sentinel := errors.New("sentinel")
	var got []string
	for _, n := range []string{"A", "B", "C", "D"} {
		event.Subscribe(p, func(event.Event, any, error) {
			got = append(got, n)
			switch n {
			case "B":
				panic(sentinel)
			case "C":
				panic("plain")
			}
		})
	}
	if err := p.fire(nil, nil); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"A", "B", "C", "D"}, got); diff != "" {
		t.Errorf("pass after panics (-want +got):\n%s", diff)
	}
	if len(reps) != 2 {
		t.Fatalf("reports = %+v, want 2", reps)
	}
	for i, want := range []any{sentinel, "plain"} {
		var pe *event.PanicError
		if !errors.As(reps[i].Err, &pe) || reps[i].Msg != "callback panicked" || reps[i].Event != "Probe(panic)" {
			t.Errorf("report %d = %+v, want a *PanicError for Probe(panic)", i, reps[i])
			continue
		}
		if pe.Value != want || len(pe.Stack) == 0 || !strings.Contains(pe.Error(), fmt.Sprint(want)) {
			t.Errorf("report %d: value %v, stack %d bytes, %q", i, pe.Value, len(pe.Stack), pe.Error())
		}
	}
	if !errors.Is(reps[0].Err, sentinel) || errors.Unwrap(reps[1].Err) != nil {
		t.Error("PanicError must unwrap to the panic value exactly when it is an error")
	}
}

func TestInfoAndStateNames(t *testing.T) {
	s := &event.Serial{}
	if got := newProbe(s, "x", true, 0).Info(); got != "Probe(x)" {
		t.Errorf("Info = %q", got)
	}
	var names []string
	for _, st := range []event.State{event.Created, event.Active, event.Fired, event.Stopped, event.StateClosed} {
		names = append(names, st.String())
	}
	if diff := cmp.Diff([]string{"created", "active", "fired", "stopped", "closed"}, names); diff != "" {
		t.Errorf("state names (-want +got):\n%s", diff)
	}
}

// A callback calling runtime.Goexit ends its goroutine, but the event is
// not left in its pass: it notifies again, and the exit is reported.
func TestGoexitInCallback(t *testing.T) {
	var reported []string
	s := &event.Serial{ReportFunc: func(_ event.Event, msg string, _ error) { reported = append(reported, msg) }}
	p := newProbe(s, "periodic", true, 0)
	p.Start()
	calls := 0
	event.Subscribe(p, func(event.Event, any, error) {
		calls++
		if calls == 1 {
			runtime.Goexit()
		}
	})
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.fire(nil, nil)
	}()
	<-done
	if st := event.StateOf(p); st != event.Active {
		t.Fatalf("after a Goexit the event is %v, want active", st)
	}
	if err := p.fire(nil, nil); err != nil || calls != 2 {
		t.Fatalf("second notification: %v, %d calls", err, calls)
	}
	if diff := cmp.Diff([]string{"callback called runtime.Goexit"}, reported); diff != "" {
		t.Errorf("reports (-want +got):\n%s", diff)
	}
	p.Close()
}
