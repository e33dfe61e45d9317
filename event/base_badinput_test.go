package event_test

import (
	"context"
	"errors"
	"testing"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/eventkind"
	"github.com/uvevent/uvevent/internal/waiting"
)

// Bad input gets a clear error, never a panic.
func TestBadInputIsRefused(t *testing.T) {
	s := &event.Serial{}
	f := event.NewFuture[int](s)
	if err := f.AddCallback(event.NewCallback(nil)); !errors.Is(err, event.ErrNilCallback) {
		t.Errorf("AddCallback(NewCallback(nil)) = %v, want ErrNilCallback", err)
	}
	if err := f.AddCallback(nil); !errors.Is(err, event.ErrNilCallback) {
		t.Errorf("AddCallback(nil) = %v, want ErrNilCallback", err)
	}
	if cb, err := event.Subscribe(f, nil); cb != nil || !errors.Is(err, event.ErrNilCallback) {
		t.Errorf("Subscribe(ev, nil) = %v, %v; want nil, ErrNilCallback", cb, err)
	}
	if _, err := event.Subscribe(nil, func(event.Event, any, error) {}); !errors.Is(err, event.ErrNilEvent) {
		t.Errorf("Subscribe(nil, fn) = %v, want ErrNilEvent", err)
	}
	f.Resolve(1)
	if err := f.Replay(event.NewCallback(nil)); !errors.Is(err, event.ErrNilCallback) {
		t.Errorf("Replay(NewCallback(nil)) = %v, want ErrNilCallback", err)
	}
	if eventkind.Subscribers(f) != 0 {
		t.Error("a refused callback was subscribed")
	}

	var typedNil *event.Future[int]
	for name, evs := range map[string][]event.Event{
		"nil":                 {nil},
		"typed nil":           {typedNil},
		"nil among others":    {event.NewFuture[int](s), nil},
		"zero Base (no Init)": {&struct{ event.Base }{}},
	} {
		outs, err := event.Await(t.Context(), event.Any(), evs...)
		if outs != nil || !errors.Is(err, event.ErrNilEvent) {
			t.Errorf("Await(%s) = %v, %v; want ErrNilEvent", name, outs, err)
		}
	}
	// A zero Mode says no rule: refused, never a wait that only the
	// context ends.
	if outs, err := event.Await(t.Context(), event.Mode{}, event.NewFuture[int](s)); outs != nil || !errors.Is(err, event.ErrBadMode) {
		t.Errorf("Await(zero Mode) = %v, %v; want ErrBadMode", outs, err)
	}
	//lint:ignore SA1012 the nil context is the bad input under test
	if outs, err := event.Await(nil, event.Any(), f); outs != nil || err == nil {
		t.Errorf("Await(nil context) = %v, %v; want an error", outs, err)
	}
	if _, err := event.AwaitValue[int](t.Context(), typedNil); !errors.Is(err, event.ErrNilEvent) {
		t.Errorf("AwaitValue(typed nil) = %v, want ErrNilEvent", err)
	}
	for name, fut := range map[string]*event.Future[int]{"nil": typedNil, "zero": {}} {
		if _, err := fut.Await(t.Context()); !errors.Is(err, event.ErrNilEvent) {
			t.Errorf("%s Future's Await = %v, want ErrNilEvent", name, err)
		}
	}
}

// A future made without an owner refuses every operation with ErrNoOwner.
func TestFutureWithoutOwner(t *testing.T) {
	for name, o := range map[string]event.Owner{"nil": nil, "typed nil": (*event.Serial)(nil)} {
		f := event.NewFuture[string](o)
		if err := f.Resolve("x"); !errors.Is(err, event.ErrNoOwner) {
			t.Errorf("%s owner: Resolve = %v, want ErrNoOwner", name, err)
		}
		if err := f.AddCallback(event.NewCallback(func(event.Event, any, error) {})); !errors.Is(err, event.ErrNoOwner) {
			t.Errorf("%s owner: AddCallback = %v, want ErrNoOwner", name, err)
		}
		if _, err := f.Await(t.Context()); !errors.Is(err, event.ErrNoOwner) {
			t.Errorf("%s owner: Await = %v, want ErrNoOwner", name, err)
		}
		if got := f.Info(); got == "" {
			t.Errorf("%s owner: empty Info", name)
		}
		f.Dispose()
	}
}

// Disposing a Go-owned event twice does nothing the second time.
func TestDisposeTwice(t *testing.T) {
	s := &event.Serial{}
	f := event.NewFuture[int](s)
	p := newProbe(s, "p", true, event.GoOwned)
	for _, ev := range []event.Event{f, p} {
		ev.Dispose()
		ev.Dispose()
		if !ev.Flags().Has(event.Closed) {
			t.Errorf("%s: not closed after Dispose", ev.Info())
		}
	}
}

// Await starts the loop events it waits on and stops them afterwards; the
// Start is counted, so the caller's own Start stays.
func TestAwaitStartsAndStops(t *testing.T) {
	s := &event.Serial{}
	idle := newProbe(s, "idle", true, 0)
	mine := newProbe(s, "mine", true, 0)
	mine.Start()
	var during []loopState
	_, err := await(t, t.Context(), event.Any(), func(func(error)) {
		during = append(during, stateOf(s, idle), stateOf(s, mine))
		idle.fire("go", nil)
	}, idle, mine)
	if err != nil {
		t.Fatal(err)
	}
	want := []loopState{
		{Refs: 1, Arms: 1, Active: 2, State: "active"},
		{Refs: 2, Arms: 1, Active: 2, State: "active"},
	}
	after := []loopState{stateOf(s, idle), stateOf(s, mine)}
	wantAfter := []loopState{
		{Refs: 0, Arms: 1, Disarms: 1, Active: 1, State: "stopped"},
		{Refs: 1, Arms: 1, Active: 1, State: "active"},
	}
	if diff := cmpDiff(want, during); diff != "" {
		t.Errorf("while waiting (-want +got):\n%s", diff)
	}
	if diff := cmpDiff(wantAfter, after); diff != "" {
		t.Errorf("after the wait (-want +got):\n%s", diff)
	}
	mine.Stop()
}

// stateHook keeps the WaitState and acts while Await waits.
type stateHook struct {
	during func(ws waiting.State)
}

func (h *stateHook) BeginWait(_ []event.Event, ws waiting.State) { h.during(ws) }
func (h *stateHook) EndWait()                                    {}

// A wait whose context is done is over at once, before its goroutine wakes:
// a deadlock detector must not count it.
func TestWaitDoneWhenContextDone(t *testing.T) {
	s := &event.Serial{}
	f := event.NewFuture[int](s)
	ctx, cancel := context.WithCancel(t.Context())
	var before, after bool
	h := &stateHook{during: func(ws waiting.State) {
		before = ws.Done()
		cancel()
		after = ws.Done()
	}}
	_, err := event.Await(waiting.With(ctx, h), event.Any(), f)
	if !errors.Is(err, context.Canceled) || before || !after {
		t.Errorf("Await = %v; Done before cancel %v, after %v; want Canceled, false, true", err, before, after)
	}
}

func TestTimeoutError(t *testing.T) {
	f := event.NewFuture[int](&event.Serial{})
	_, err := event.Await(t.Context(), event.Any().Within(1), f)
	var te *event.TimeoutError
	if !errors.Is(err, event.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &te) || !te.Timeout() {
		t.Fatalf("Within timeout = %#v, want a TimeoutError matching ErrTimeout and DeadlineExceeded", err)
	}
	if got := err.Error(); got != "timeout occurred after 1ns" {
		t.Errorf("message %q", got)
	}
	if !errors.Is(event.ErrTimeout, context.DeadlineExceeded) || event.ErrTimeout.Error() != "timed out" {
		t.Errorf("ErrTimeout = %v", event.ErrTimeout)
	}
	if errors.Is(context.Canceled, event.ErrTimeout) {
		t.Error("Canceled matches ErrTimeout")
	}
}
