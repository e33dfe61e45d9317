package event_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/uvevent/uvevent/event"
)

func cmpDiff(want, got any) string { return cmp.Diff(want, got, equateErrors) }

func TestTypedAwaits(t *testing.T) {
	s := &event.Serial{}
	boom := errors.New("boom")
	fs := []*event.Future[string]{event.NewFuture[string](s), event.NewFuture[string](s), event.NewFuture[string](s)}
	typed := []event.Typed[string]{fs[0], fs[1], fs[2]}

	go fs[2].Resolve("c")
	go fs[0].Resolve("a")
	go fs[1].Resolve("b")
	vs, err := event.AwaitAll(t.Context(), typed...)
	if diff := cmpDiff([]string{"a", "b", "c"}, vs); diff != "" || err != nil {
		t.Errorf("AwaitAll by position (-want +got), err %v:\n%s", err, diff)
	}
	if v, err := event.AwaitValue[string](t.Context(), fs[1]); v != "b" || err != nil {
		t.Errorf("AwaitValue = %q, %v", v, err)
	}

	gs := []*event.Future[int]{event.NewFuture[int](s), event.NewFuture[int](s)}
	gs[1].Reject(boom)
	vals, err := event.AwaitAll[int](t.Context(), gs[0], gs[1])
	if !errors.Is(err, boom) || len(vals) != 2 {
		t.Errorf("AwaitAll with a failure = %v, %v; want boom and two slots", vals, err)
	}

	hs := []*event.Future[int]{event.NewFuture[int](s), event.NewFuture[int](s), event.NewFuture[int](s)}
	hs[0].Reject(boom)
	hs[2].Resolve(3)
	winner, v, err := event.AwaitFirst[int](t.Context(), hs[0], hs[1], hs[2])
	if winner != 2 || v != 3 || err != nil {
		t.Errorf("AwaitFirst = %d, %d, %v; want 2, 3, nil", winner, v, err)
	}
	hs[1].Reject(errors.New("also"))
	winner, _, err = event.AwaitFirst[int](t.Context(), hs[0], hs[1])
	if winner != -1 || !errors.Is(err, boom) {
		t.Errorf("AwaitFirst, all failed = %d, %v; want -1 and the joined errors", winner, err)
	}
	if v, ok, err := gs[1].Outcome(); v != 0 || !ok || !errors.Is(err, boom) {
		t.Errorf("Outcome of a failed future = %v, %v, %v", v, ok, err)
	}
}

func TestWinner(t *testing.T) {
	s := &event.Serial{}
	a, b, c := event.NewFuture[string](s), event.NewFuture[string](s), event.NewFuture[string](s)
	a.Reject(errors.New("a failed"))
	c.Resolve("c")
	outs, err := event.Await(t.Context(), event.FirstSuccess(), a, b, c)
	w, ok := event.Winner(outs)
	if err != nil || !ok || w.Index != 2 || w.Result != "c" {
		t.Errorf("Winner = %+v, %v (err %v); want event 2", w, ok, err)
	}
	if _, ok := event.Winner(outs[:2]); ok {
		t.Error("a winner among a failure and a pending event")
	}
}
