package event_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/uvevent/uvevent/event"
)

func TestAwaitAllSettledByPosition(t *testing.T) {
	s := &event.Serial{}
	boom := errors.New("boom")
	fs := []*event.Future[int]{event.NewFuture[int](s), event.NewFuture[int](s), event.NewFuture[int](s)}
	go fs[2].Resolve(3)
	go fs[1].Reject(boom)
	go fs[0].Resolve(1)
	vs, errs, err := event.AwaitAllSettled(t.Context(), fs...) // a []*Future[int] as it is
	if err != nil {
		t.Fatalf("AwaitAllSettled: %v", err)
	}
	if diff := cmpDiff([]int{1, 0, 3}, vs); diff != "" {
		t.Errorf("values (-want +got):\n%s", diff)
	}
	if diff := cmpDiff([]error{nil, boom, nil}, errs); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
}

func TestAwaitAllSettledEndsWithItsContext(t *testing.T) {
	s := &event.Serial{}
	a, b := event.NewFuture[string](s), event.NewFuture[string](s)
	a.Resolve("a")
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	vs, errs, err := event.AwaitAllSettled(ctx, a, b)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("AwaitAllSettled with an ended context = %v, want context.Canceled", err)
	}
	if diff := cmpDiff([]string{"a", ""}, vs); diff != "" {
		t.Errorf("values (-want +got):\n%s", diff)
	}
	// The one that never notified has the wait's error, not an empty
	// success; the one that did keeps its own outcome.
	if len(errs) != 2 || errs[0] != nil || !errors.Is(errs[1], context.Canceled) {
		t.Errorf("errors = %v; want [nil, context.Canceled]", errs)
	}
}

// A deadline that ends the wait is the error of each event still pending:
// errors.Is matches context.DeadlineExceeded there, and nowhere else.
func TestAwaitAllSettledPendingGetTheDeadline(t *testing.T) {
	s := &event.Serial{}
	fs := []*event.Future[int]{event.NewFuture[int](s), event.NewFuture[int](s), event.NewFuture[int](s)}
	boom := errors.New("boom")
	fs[0].Resolve(1)
	fs[2].Reject(boom)
	ctx, cancel := context.WithTimeout(t.Context(), time.Millisecond)
	defer cancel()
	vs, errs, err := event.AwaitAllSettled(ctx, fs...)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("AwaitAllSettled = %v, want context.DeadlineExceeded", err)
	}
	if diff := cmpDiff([]int{1, 0, 0}, vs); diff != "" {
		t.Errorf("values (-want +got):\n%s", diff)
	}
	if len(errs) != 3 || errs[0] != nil || !errors.Is(errs[1], context.DeadlineExceeded) || errs[2] != boom {
		t.Errorf("errors = %v; want [nil, context.DeadlineExceeded, boom]", errs)
	}
}

func TestAwaitsTakeASliceOfOneKind(t *testing.T) {
	s := &event.Serial{}
	fs := []*event.Future[string]{event.NewFuture[string](s), event.NewFuture[string](s)}
	fs[0].Reject(errors.New("down"))
	fs[1].Resolve("b")
	if _, err := event.AwaitAll(t.Context(), fs...); err == nil {
		t.Error("AwaitAll([]*Future) with a failure = nil error")
	}
	if w, v, err := event.AwaitFirst(t.Context(), fs...); w != 1 || v != "b" || err != nil {
		t.Errorf("AwaitFirst([]*Future) = %d, %q, %v; want 1, b", w, v, err)
	}
	mixed := []event.Typed[string]{fs[1], fs[1]}
	if vs, err := event.AwaitAll(t.Context(), mixed...); err != nil || len(vs) != 2 || vs[0] != "b" {
		t.Errorf("AwaitAll([]Typed) = %v, %v", vs, err)
	}
}
