package event_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/eventkind"
	"github.com/uvevent/uvevent/internal/waiting"
)

// waitHook is a waiter (internal/waiting): it lets a test act while Await is subscribed
// and waiting, without sleeping.
type waitHook struct {
	during       func(abort func(error))
	began, ended int
}

func (w *waitHook) BeginWait(_ []event.Event, ws waiting.State) {
	w.began++
	if w.during != nil {
		w.during(ws.Abort)
	}
}

func (w *waitHook) EndWait() { w.ended++ }

// out is an Outcome without its event (checked separately).
type out struct {
	Index  int
	Result any
	Err    error
}

// await runs Await with a waitHook that calls during, and checks what every
// Await must leave behind: outcomes naming the right events, no subscriber
// left on any event, and balanced Begin/EndWait.
func await(t *testing.T, ctx context.Context, m event.Mode, during func(abort func(error)), evs ...event.Event) ([]out, error) {
	t.Helper()
	// A broken waker fails here instead of hanging the package; no correct
	// wait in these tests comes near this bound.
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	w := &waitHook{during: during}
	outs, err := event.Await(waiting.With(ctx, w), m, evs...)
	var got []out
	if outs != nil && len(outs) != len(evs) {
		t.Errorf("Await returned %d outcomes for %d events", len(outs), len(evs))
	}
	for i, o := range outs {
		if o.Index != i || o.Event != evs[i] {
			t.Errorf("outcome %d has index %d and names %v, want event %d", i, o.Index, o.Event.Info(), i)
		}
		if o.Done {
			got = append(got, out{o.Index, o.Result, o.Err})
		} else if o.Result != nil || o.Err != nil {
			t.Errorf("outcome %d is not done but has %v, %v", i, o.Result, o.Err)
		}
	}
	for i, ev := range evs {
		if n := eventkind.Subscribers(ev); n != 0 {
			t.Errorf("event %d (%s) keeps %d subscribers after Await", i, ev.Info(), n)
		}
	}
	if w.began != w.ended {
		t.Errorf("BeginWait called %d times, EndWait %d", w.began, w.ended)
	}
	return got, err
}

func futures(s event.Owner, n int) ([]*event.Future[any], []event.Event) {
	fs := make([]*event.Future[any], n)
	evs := make([]event.Event, n)
	for i := range fs {
		fs[i] = event.NewFuture[any](s)
		evs[i] = fs[i]
	}
	return fs, evs
}

var equateErrors = cmpopts.EquateErrors()

func TestAwaitModes(t *testing.T) {
	e0, e1, e2 := errors.New("e0"), errors.New("e1"), errors.New("e2")
	tests := []struct {
		name    string
		mode    event.Mode
		do      func(fs []*event.Future[any]) // runs while Await waits
		want    []out
		wantErr []error // errors.Is must hold for each; nil means no error
	}{
		{"any success", event.Any(), func(fs []*event.Future[any]) { fs[1].Resolve("b") },
			[]out{{1, "b", nil}}, nil},
		{"any error", event.Any(), func(fs []*event.Future[any]) { fs[2].Reject(e2); fs[0].Resolve("late") },
			[]out{{2, nil, e2}}, []error{e2}},
		{"any ignoring errors", event.Any().IgnoreErrors(), func(fs []*event.Future[any]) { fs[2].Reject(e2); fs[0].Resolve("a") },
			[]out{{0, "a", nil}, {2, nil, e2}}, nil},
		{"all, by position", event.All(), func(fs []*event.Future[any]) { fs[2].Resolve(2); fs[0].Resolve(0); fs[1].Resolve(1) },
			[]out{{0, 0, nil}, {1, 1, nil}, {2, 2, nil}}, nil},
		{"all ends at the first error", event.All(), func(fs []*event.Future[any]) { fs[1].Resolve(1); fs[0].Reject(e0); fs[2].Reject(e2) },
			[]out{{0, nil, e0}, {1, 1, nil}}, []error{e0}},
		{"all ignoring errors", event.All().IgnoreErrors(), func(fs []*event.Future[any]) { fs[0].Reject(e0); fs[1].Resolve(1); fs[2].Reject(e2) },
			[]out{{0, nil, e0}, {1, 1, nil}, {2, nil, e2}}, nil},
		{"first success", event.FirstSuccess(), func(fs []*event.Future[any]) { fs[0].Reject(e0); fs[2].Resolve("c"); fs[1].Resolve("b") },
			[]out{{0, nil, e0}, {2, "c", nil}}, nil},
		{"first success, all fail", event.FirstSuccess(), func(fs []*event.Future[any]) { fs[1].Reject(e1); fs[0].Reject(e0); fs[2].Reject(e2) },
			[]out{{0, nil, e0}, {1, nil, e1}, {2, nil, e2}}, []error{e0, e1, e2}},
		{"first success ignoring errors is first success", event.FirstSuccess().IgnoreErrors(), func(fs []*event.Future[any]) { fs[1].Reject(e1); fs[0].Resolve(0) },
			[]out{{0, 0, nil}, {1, nil, e1}}, nil},
		{"any ignoring errors, all fail", event.Any().IgnoreErrors(), func(fs []*event.Future[any]) { fs[1].Reject(e1); fs[0].Reject(e0); fs[2].Reject(e2) },
			[]out{{0, nil, e0}, {1, nil, e1}, {2, nil, e2}}, []error{e0, e1, e2}},
		{"at least 2", event.AtLeast(2), func(fs []*event.Future[any]) { fs[0].Resolve(0); fs[2].Resolve(2); fs[1].Reject(e1) },
			[]out{{0, 0, nil}, {2, 2, nil}}, nil},
		{"at least 2 ends at the first error", event.AtLeast(2), func(fs []*event.Future[any]) { fs[0].Resolve(0); fs[1].Reject(e1); fs[2].Resolve(2) },
			[]out{{0, 0, nil}, {1, nil, e1}}, []error{e1}},
		{"at least 2 ignoring errors", event.AtLeast(2).IgnoreErrors(), func(fs []*event.Future[any]) { fs[0].Resolve(0); fs[1].Reject(e1); fs[2].Resolve(2) },
			[]out{{0, 0, nil}, {1, nil, e1}, {2, 2, nil}}, nil},
		{"at least 2 ignoring errors, impossible", event.AtLeast(2).IgnoreErrors(), func(fs []*event.Future[any]) { fs[0].Reject(e0); fs[2].Reject(e2); fs[1].Resolve(1) },
			[]out{{0, nil, e0}, {2, nil, e2}}, []error{e0, e2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := &event.Serial{}
			fs, evs := futures(s, 3)
			got, err := await(t, t.Context(), tc.mode, func(func(error)) { tc.do(fs) }, evs...)
			if diff := cmp.Diff(tc.want, got, equateErrors); diff != "" {
				t.Errorf("outcomes (-want +got):\n%s", diff)
			}
			if tc.wantErr == nil && err != nil {
				t.Errorf("Await error = %v, want nil", err)
			}
			for _, e := range tc.wantErr {
				if !errors.Is(err, e) {
					t.Errorf("Await error = %v, want it to include %v", err, e)
				}
			}
		})
	}
}

func TestAwaitBadModes(t *testing.T) {
	s := &event.Serial{}
	_, evs := futures(s, 3)
	for _, tc := range []struct {
		name string
		mode event.Mode
		evs  []event.Event
	}{
		{"AtLeast(0)", event.AtLeast(0), evs},
		{"AtLeast(-1)", event.AtLeast(-1), evs},
		{"AtLeast(4) of 3", event.AtLeast(4), evs},
		{"no events", event.Any(), nil},
		{"negative timeout", event.All().Within(-time.Second), evs},
	} {
		outs, err := event.Await(t.Context(), tc.mode, tc.evs...)
		if err == nil || outs != nil {
			t.Errorf("%s: Await = %v, %v; want an error and no outcomes", tc.name, outs, err)
		}
	}
	for i, ev := range evs {
		if eventkind.Subscribers(ev) != 0 {
			t.Errorf("a refused Await subscribed to event %d", i)
		}
	}
}

func TestAwaitTimeout(t *testing.T) {
	s := &event.Serial{}
	fs, evs := futures(s, 2)
	got, err := await(t, t.Context(), event.All().Within(10*time.Millisecond), func(func(error)) { fs[1].Resolve(1) }, evs...)
	if !errors.Is(err, event.ErrTimeout) {
		t.Fatalf("Await = %v, want ErrTimeout", err)
	}
	if diff := cmp.Diff([]out{{1, 1, nil}}, got, equateErrors); diff != "" {
		t.Errorf("outcomes seen before the timeout (-want +got):\n%s", diff)
	}
	// A bound that is not reached changes nothing.
	got, err = await(t, t.Context(), event.Any().Within(time.Hour), nil, evs[1])
	if err != nil || len(got) != 1 {
		t.Errorf("Await(done future, Within(1h)) = %v, %v", got, err)
	}
}

func TestAwaitContext(t *testing.T) {
	s := &event.Serial{}
	_, evs := futures(s, 2)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := await(t, ctx, event.Any(), nil, evs...); !errors.Is(err, context.Canceled) {
		t.Errorf("Await with a canceled context = %v, want context.Canceled", err)
	}
	ctx, cancel = context.WithCancel(t.Context())
	defer cancel()
	if _, err := await(t, ctx, event.All(), func(func(error)) { cancel() }, evs...); !errors.Is(err, context.Canceled) {
		t.Errorf("Await canceled while waiting = %v, want context.Canceled", err)
	}
	ctx, cancel2 := context.WithTimeout(t.Context(), time.Millisecond)
	defer cancel2()
	if _, err := await(t, ctx, event.All(), nil, evs...); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Await past the context deadline = %v, want DeadlineExceeded", err)
	}
}

func TestAwaitAbortedByWaiter(t *testing.T) {
	s := &event.Serial{}
	_, evs := futures(s, 2)
	_, err := await(t, t.Context(), event.All(), func(abort func(error)) { abort(event.ErrDeadlock) }, evs...)
	if !errors.Is(err, event.ErrDeadlock) {
		t.Errorf("Await aborted by its Waiter = %v, want ErrDeadlock", err)
	}
}

func TestAwaitClosedEvents(t *testing.T) {
	s := &event.Serial{}
	closedProbe := newProbe(s, "gone", true, 0)
	closedProbe.Close()
	closedFuture := event.NewFuture[any](s) // closed before any outcome
	closedFuture.Close()
	done := event.NewFuture[any](s)
	done.Resolve("kept")
	failed := event.NewFuture[any](s)
	errStored := errors.New("stored")
	failed.Reject(errStored)

	got, err := await(t, t.Context(), event.All().IgnoreErrors(), nil, closedProbe, closedFuture, done, failed)
	want := []out{{0, nil, event.ErrClosed}, {1, nil, event.ErrClosed}, {2, "kept", nil}, {3, nil, errStored}}
	if diff := cmp.Diff(want, got, equateErrors); diff != "" {
		t.Errorf("outcomes of closed events (-want +got):\n%s", diff)
	}
	if err != nil {
		t.Errorf("Await(All().IgnoreErrors()) error = %v, want nil", err)
	}
	if _, err := await(t, t.Context(), event.All(), nil, done, failed); !errors.Is(err, errStored) {
		t.Errorf("Await(All()) error = %v, want the stored error", err)
	}
	w := &waitHook{}
	if _, err := event.Await(waiting.With(t.Context(), w), event.Any(), done); err != nil || w.began != 0 {
		t.Errorf("a replayed outcome must end the wait before it begins: err=%v began=%d", err, w.began)
	}
}

func TestAwaitUnsubscribesEverywhere(t *testing.T) {
	s := &event.Serial{}
	fs, _ := futures(s, 2)
	p := newProbe(s, "ticker", true, 0)
	p.Start()
	keep := event.NewCallback(func(event.Event, any, error) {})
	p.AddCallback(keep)
	w := &waitHook{during: func(func(error)) {
		if n := eventkind.Subscribers(p); n != 2 {
			t.Errorf("while waiting the ticker has %d subscribers, want 2", n)
		}
		p.fire("tick", nil)
	}}
	outs, err := event.Await(waiting.With(t.Context(), w), event.Any(), fs[0], p, fs[1])
	if err != nil || len(outs) != 3 || !outs[1].Done || outs[1].Result != "tick" || outs[0].Done || outs[2].Done {
		t.Errorf("Await = %+v, %v", outs, err)
	}
	subs := []int{eventkind.Subscribers(fs[0]), eventkind.Subscribers(p), eventkind.Subscribers(fs[1])}
	if diff := cmp.Diff([]int{0, 1, 0}, subs); diff != "" {
		t.Errorf("subscribers after Await (-want +got):\n%s", diff)
	}
	if keep.Refs() != 2 {
		t.Errorf("Await disturbed another subscriber: refs %d", keep.Refs())
	}
}

// TestAwaitPeriodicAndDuplicates: a periodic event counts once however
// often it fires; an event listed twice counts at both places.
func TestAwaitPeriodicAndDuplicates(t *testing.T) {
	s := &event.Serial{}
	p := newProbe(s, "tick", true, 0)
	f := event.NewFuture[any](s)
	got, err := await(t, t.Context(), event.All(), func(func(error)) {
		p.fire(1, nil)
		p.fire(2, nil)
		f.Resolve("f")
	}, p, f, f)
	if diff := cmp.Diff([]out{{0, 1, nil}, {1, "f", nil}, {2, "f", nil}}, got, equateErrors); diff != "" || err != nil {
		t.Errorf("outcomes (-want +got), err %v:\n%s", err, diff)
	}
}

func TestAwaitResolvedFromGoroutines(t *testing.T) {
	s1, s2 := &event.Serial{}, &event.Serial{}
	const n = 32
	fs := make([]*event.Future[any], n)
	evs := make([]event.Event, n)
	for i := range fs {
		owner := s1
		if i%2 == 1 {
			owner = s2 // events of two owners in one wait
		}
		fs[i] = event.NewFuture[any](owner)
		evs[i] = fs[i]
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	// Half are resolved before Await subscribes may run, half while it waits.
	for i := range n / 2 {
		wg.Add(1)
		go func() { defer wg.Done(); fs[i].Resolve(i) }()
	}
	got, err := await(t, t.Context(), event.All(), func(func(error)) {
		for i := n / 2; i < n; i++ {
			wg.Add(1)
			go func() { defer wg.Done(); fs[i].Resolve(i) }()
		}
	}, evs...)
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(got, func(a, b out) int { return a.Index - b.Index })
	want := make([]out, n)
	for i := range want {
		want[i] = out{i, i, nil}
	}
	if diff := cmp.Diff(want, got, equateErrors); diff != "" {
		t.Errorf("outcomes (-want +got):\n%s", diff)
	}
}

func TestAwaitOnLoopRefused(t *testing.T) {
	s := &event.Serial{}
	f := event.NewFuture[any](s)
	var err error
	s.Call(func() { _, err = event.Await(context.Background(), event.Any(), f) })
	if !errors.Is(err, event.ErrOnLoop) {
		t.Errorf("Await inside the owner = %v, want ErrOnLoop", err)
	}
	if eventkind.Subscribers(f) != 0 {
		t.Error("a refused Await subscribed")
	}
}

// When a wait ends on its owner, its other events are stopped at that
// moment, not when the waiting goroutine resumes: nothing can complete for
// a waiter that has gone (a channel receive that lost a race takes no
// value).
func TestAwaitStopsTheOthersWhenItEnds(t *testing.T) {
	s := &event.Serial{}
	f := event.NewFuture[int](s)
	p := newProbe(s, "loser", true, 0)
	var atTheEnd loopState
	_, err := await(t, t.Context(), event.Any(), func(func(error)) {
		s.Call(func() {
			f.Resolve(1) // ends the wait, on the owner
			atTheEnd = stateOf(s, p)
		})
	}, f, p)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(loopState{Arms: 1, Disarms: 1, State: "stopped"}, atTheEnd); diff != "" {
		t.Errorf("the other event when the wait ended (-want +got):\n%s", diff)
	}
	// An abort from outside (the context) ends the wait on the owner too.
	ctx, cancel := context.WithCancel(t.Context())
	q := newProbe(s, "cancelled", true, 0)
	_, err = await(t, ctx, event.Any(), func(func(error)) { cancel() }, q)
	if !errors.Is(err, context.Canceled) || eventkind.LoopRefs(q) != 0 || eventkind.Subscribers(q) != 0 {
		t.Errorf("cancelled wait: %v, %d starts, %d subscribers left", err, eventkind.LoopRefs(q), eventkind.Subscribers(q))
	}
}
