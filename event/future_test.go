package event_test

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/eventkind"
)

func TestFutureResolveOnceConcurrently(t *testing.T) {
	for round := range 300 {
		s := &event.Serial{}
		f := event.NewFuture[any](s)
		var got []any
		event.Subscribe(f, func(_ event.Event, r any, _ error) { got = append(got, r) })
		const n = 16
		var (
			wg      sync.WaitGroup
			start   = make(chan struct{})
			winners atomic.Int32
			winner  atomic.Value
			others  = make(chan error, n)
		)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				var err error
				if i%2 == 0 {
					err = f.Resolve(i)
				} else {
					err = f.Reject(fmt.Errorf("reject %d", i))
				}
				if err == nil {
					winners.Add(1)
					winner.Store(i)
				} else {
					others <- err
				}
			}()
		}
		close(start)
		wg.Wait()
		close(others)
		if w := winners.Load(); w != 1 {
			t.Fatalf("round %d: %d goroutines completed the future, want 1", round, w)
		}
		for err := range others {
			if !errors.Is(err, event.ErrCompleted) {
				t.Errorf("round %d: a losing completion returned %v, want ErrCompleted", round, err)
			}
		}
		w := winner.Load().(int)
		v, ok, err := f.Outcome()
		if !ok || !f.Done() {
			t.Fatalf("round %d: future not done after completion", round)
		}
		if w%2 == 0 && (v != w || err != nil || len(got) != 1 || got[0] != w) {
			t.Errorf("round %d: winner %d resolved, outcome (%v, %v), subscriber got %v", round, w, v, err, got)
		}
		if w%2 == 1 && (v != nil || err == nil || err.Error() != fmt.Sprint("reject ", w) || len(got) != 1) {
			t.Errorf("round %d: winner %d rejected, outcome (%v, %v), subscriber got %v", round, w, v, err, got)
		}
	}
}

func TestFutureRejectNil(t *testing.T) {
	s := &event.Serial{}
	f := event.NewFuture[any](s)
	if err := f.Reject(nil); err == nil {
		t.Fatal("Reject(nil) succeeded")
	}
	if f.Done() || f.Flags().Has(event.Closed) {
		t.Fatal("Reject(nil) completed the future")
	}
	if err := f.Resolve("still possible"); err != nil {
		t.Fatalf("Resolve after a refused Reject(nil): %v", err)
	}
	for _, err := range []error{f.Resolve(1), f.Reject(errors.New("x"))} {
		if !errors.Is(err, event.ErrCompleted) {
			t.Errorf("second completion = %v, want ErrCompleted", err)
		}
	}
	if v, _, _ := f.Outcome(); v != "still possible" {
		t.Errorf("outcome changed to %v", v)
	}
}

func TestFutureInfo(t *testing.T) {
	s := &event.Serial{}
	pending := event.NewFuture[any](s)
	done := event.NewFuture[any](s)
	done.Resolve(nil)
	failed := event.NewFuture[any](s)
	failed.Reject(errors.New("disk full"))
	closed := event.NewFuture[any](s)
	closed.Close() // by its holder, before completion: no longer pending
	got := []string{pending.Info(), done.Info(), failed.Info(), closed.Info()}
	want := []string{"Future(pending)", "Future(completed)", "Future(failed: disk full)", "Future(closed)"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Info (-want +got):\n%s", diff)
	}
}

func TestFutureLifecycle(t *testing.T) {
	s := &event.Serial{}
	f := event.NewFuture[any](s)
	if v, ok, err := f.Outcome(); ok || v != nil || err != nil || f.Done() {
		t.Fatal("a new future has an outcome")
	}
	// Start and Stop do nothing on a future.
	if err := f.Start(); err != nil {
		t.Fatal(err)
	}
	if eventkind.LoopRefs(f) != 0 || s.Active() != 0 {
		t.Error("Start armed a future")
	}
	f.Stop()
	var states []event.State
	var results []any
	cb := event.NewCallback(func(ev event.Event, r any, _ error) {
		states = append(states, event.StateOf(ev))
		results = append(results, r)
	})
	f.AddCallback(cb)
	f.Resolve("v")
	if diff := cmp.Diff([]any{"v"}, results); diff != "" {
		t.Errorf("subscriber results (-want +got):\n%s", diff)
	}
	if len(states) != 1 || states[0] != event.StateClosed {
		t.Errorf("state inside the completion callback = %v, want closed", states)
	}
	if cb.Refs() != 1 || eventkind.Subscribers(f) != 0 {
		t.Errorf("after completion: refs=%d subscribers=%d, want 1 and 0", cb.Refs(), eventkind.Subscribers(f))
	}
	if err := f.Start(); !errors.Is(err, event.ErrClosed) {
		t.Errorf("Start on a completed future = %v, want ErrClosed", err)
	}
}

// TestFutureClosedEarly: a future closed before completion tells its
// subscribers ErrClosed; a later completion is kept for Replay.
func TestFutureClosedEarly(t *testing.T) {
	s := &event.Serial{}
	f := event.NewFuture[any](s)
	var got []error
	event.Subscribe(f, func(_ event.Event, _ any, err error) { got = append(got, err) })
	f.Close()
	if len(got) != 1 || !errors.Is(got[0], event.ErrClosed) {
		t.Fatalf("subscriber got %v, want ErrClosed", got)
	}
	if err := f.Resolve("late"); err != nil {
		t.Fatalf("Resolve after Close: %v", err)
	}
	if len(got) != 1 {
		t.Errorf("completion after Close notified again: %v", got)
	}
	var replayed any
	if err := f.Replay(event.NewCallback(func(_ event.Event, r any, _ error) { replayed = r })); err != nil || replayed != "late" {
		t.Errorf("Replay = %v with %v, want the late result", err, replayed)
	}
}

func TestFutureSubscribersFromGoroutines(t *testing.T) {
	s := &event.Serial{}
	f := event.NewFuture[any](s)
	const n = 8
	var calls atomic.Int32
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cb := event.NewCallback(func(event.Event, any, error) { calls.Add(1) })
			if err := f.AddCallback(cb); err != nil {
				// Too late: the outcome is replayed instead.
				if rerr := f.Replay(cb); rerr != nil {
					t.Errorf("AddCallback = %v, then Replay = %v", err, rerr)
				}
			}
		}()
	}
	wg.Add(1)
	go func() { defer wg.Done(); f.Resolve(1) }()
	wg.Wait()
	if got := calls.Load(); got != n {
		t.Errorf("%d of %d subscribers saw the outcome", got, n)
	}
}
