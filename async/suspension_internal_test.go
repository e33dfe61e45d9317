package async

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A Resume that comes after Suspend's wait has ended, before Suspend has
// taken the outcome, is for the next Suspend: nothing waits to be taken,
// so it must not be refused with event.ErrCompleted.
func TestSuspensionResumeRightAfterTheWaitEnds(t *testing.T) {
	r := newReactorT(t)
	s, _ := NewSuspension[int](r)
	var during error
	testHookAwaited = func() { // Suspend's goroutine: no race on the hook
		testHookAwaited = nil
		during = s.Resume(2)
	}
	t.Cleanup(func() { testHookAwaited = nil })
	if err := s.Resume(1); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // bounds a broken test
	defer cancel()
	if v, err := s.Suspend(ctx); v != 1 || err != nil {
		t.Fatalf("first Suspend = %v, %v; want 1", v, err)
	}
	if during != nil {
		t.Fatalf("Resume as the wait ended = %v, want nil", during)
	}
	if v, err := s.Suspend(ctx); v != 2 || err != nil {
		t.Errorf("second Suspend = %v, %v; want the value of that Resume, 2", v, err)
	}
}

// A Suspend whose context ends just as a Resume comes still returns the
// value: a Resume that succeeded is never lost.
func TestSuspensionResumeAsTheContextEnds(t *testing.T) {
	r := newReactorT(t)
	s, _ := NewSuspension[int](r)
	var during error
	testHookAwaited = func() {
		testHookAwaited = nil
		during = s.Resume(7)
	}
	t.Cleanup(func() { testHookAwaited = nil })
	bound, stop := context.WithTimeout(context.Background(), 30*time.Second) // bounds a broken test
	defer stop()
	ctx, cancel := context.WithCancel(bound)
	cancel()
	v, err := s.Suspend(ctx)
	if during != nil {
		t.Fatalf("Resume as the context ended = %v, want nil", during)
	}
	if v != 7 || err != nil {
		t.Errorf("Suspend = %v, %v; want the resumed 7", v, err)
	}
	if err := s.Resume(8); err != nil {
		t.Errorf("Resume after = %v: the value 7 was left waiting to be taken", err)
	}
	if v, err := s.Suspend(bound); v != 8 || err != nil {
		t.Errorf("next Suspend = %v, %v; want 8", v, err)
	}
	if _, err := s.Suspend(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Suspend with an ended context = %v, want context.Canceled", err)
	}
}
