package event_test

import (
	"context"
	"errors"
	"testing"

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
	if len(vs) == 2 && (vs[1] != "" || errs[1] != nil) {
		t.Errorf("an event that never notified = %q, %v; want the zero value and nil", vs[1], errs[1])
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
