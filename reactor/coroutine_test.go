package reactor_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
)

// awaitEachOther starts two coroutines, each awaiting the other's future.
func awaitEachOther(t *testing.T, r *reactor.Reactor) (a, b *reactor.Coroutine) {
	t.Helper()
	ctx := runCtx(t)
	fa, fb := event.NewFuture(r), event.NewFuture(r)
	a, err := r.Go(ctx, func(ctx context.Context) (any, error) {
		_, err := event.Await(ctx, event.Any(), fb)
		fa.Reject(err)
		return nil, err
	})
	if err != nil {
		t.Fatal(err)
	}
	b, err = r.Go(ctx, func(ctx context.Context) (any, error) {
		_, err := event.Await(ctx, event.Any(), fa)
		fb.Reject(err)
		return nil, err
	})
	if err != nil {
		t.Fatal(err)
	}
	return a, b
}

func outcomeErr(t *testing.T, c *reactor.Coroutine) error {
	t.Helper()
	_, err, ok := c.Outcome()
	if !ok {
		t.Fatalf("%s has no outcome", c.Info())
	}
	return err
}

func TestDeadlockTwoCoroutinesAwaitEachOther(t *testing.T) {
	r, rep := newReactor(t)
	a, b := awaitEachOther(t, r)
	if err := r.Run(runCtx(t)); err != nil {
		t.Fatal(err)
	}
	for _, c := range []*reactor.Coroutine{a, b} {
		err := outcomeErr(t, c)
		var dl *reactor.DeadlockError
		if !errors.Is(err, event.ErrDeadlock) || !errors.As(err, &dl) {
			t.Fatalf("%s ended with %v, want a DeadlockError", c.Info(), err)
		}
		want := []reactor.WaiterReport{
			{Coroutine: "Coroutine 1 (waiting on 1 events)", Events: []string{"Future(pending)"}},
			{Coroutine: "Coroutine 2 (waiting on 1 events)", Events: []string{"Future(pending)"}},
		}
		if diff := cmp.Diff(want, dl.Waiters); diff != "" {
			t.Fatalf("deadlock report (-want +got):\n%s", diff)
		}
		if !strings.Contains(err.Error(), "2 coroutines wait") {
			t.Fatalf("report text %q does not say how many wait", err)
		}
	}
	msgs, _ := rep.snapshot()
	if diff := cmp.Diff([]string{"deadlock"}, msgs); diff != "" {
		t.Fatalf("reports (-want +got):\n%s", diff)
	}
}

// A pending, non-hidden timer can still wake someone: no deadlock while it
// is armed. When it fires and nobody is woken, the deadlock is found.
func TestPendingTimerPreventsDeadlock(t *testing.T) {
	r, _ := newReactor(t)
	a, b := awaitEachOther(t, r)
	tm, _ := r.NewTimer(20*time.Millisecond, 0)
	var deadlockedBeforeFire bool
	event.Subscribe(tm, func(event.Event, any, error) {
		_, _, doneA := a.Outcome()
		_, _, doneB := b.Outcome()
		deadlockedBeforeFire = doneA || doneB
	})
	tm.Start()
	if err := r.Run(runCtx(t)); err != nil {
		t.Fatal(err)
	}
	if deadlockedBeforeFire {
		t.Fatal("a deadlock was reported while a timer was pending")
	}
	if err := outcomeErr(t, a); !errors.Is(err, event.ErrDeadlock) {
		t.Fatalf("after the timer fired: %v, want ErrDeadlock", err)
	}
}

// A hidden timer does not count: the deadlock is reported while it is armed.
func TestHiddenTimerDoesNotPreventDeadlock(t *testing.T) {
	r, _ := newReactor(t)
	a, b := awaitEachOther(t, r)
	tm, _ := r.NewTimer(time.Hour, time.Hour)
	tm.SetHidden(true)
	tm.Start()
	if err := r.Run(runCtx(t)); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(outcomeErr(t, a), event.ErrDeadlock) || !errors.Is(outcomeErr(t, b), event.ErrDeadlock) {
		t.Fatal("a hidden timer kept the deadlock from being seen")
	}
	if got := event.LoopRefs(tm); got != 1 {
		t.Fatalf("the hidden timer was disturbed: LoopRefs = %d", got)
	}
	tm.Close()
}

// A coroutine's result replays to a late waiter; a panic becomes its error.
func TestCoroutineResultAndPanic(t *testing.T) {
	r, _ := newReactor(t)
	ctx := runCtx(t)
	ok, _ := r.Go(ctx, func(ctx context.Context) (any, error) { return 42, nil })
	bad, _ := r.Go(ctx, func(ctx context.Context) (any, error) { panic("in a coroutine") })
	if err := r.Run(ctx); err != nil {
		t.Fatal(err)
	}
	outs, err := event.Await(ctx, event.All(), ok)
	if err != nil || len(outs) != 1 || outs[0].Result != 42 {
		t.Fatalf("late Await on a finished coroutine = %v, %v; want the replayed 42", outs, err)
	}
	var pe *event.PanicError
	if err := outcomeErr(t, bad); !errors.As(err, &pe) || pe.Value != "in a coroutine" {
		t.Fatalf("panicking coroutine ended with %v, want its PanicError", err)
	}
	if got := ok.Info(); got != "Coroutine 1 (done)" {
		t.Fatalf("Info = %q", got)
	}
	if got := r.Stats().Coroutines; got != 0 {
		t.Fatalf("Coroutines = %d after all ended", got)
	}
}

// A coroutine woken by a timer is no deadlock; Run returns when it ends.
// The timer is periodic so that a firing before Await subscribes (the
// coroutine races the loop) cannot leave the wait without a wake-up.
func TestCoroutineWokenByTimer(t *testing.T) {
	r, rep := newReactor(t)
	ctx := runCtx(t)
	tm, _ := r.NewTimer(time.Millisecond, time.Millisecond)
	c, _ := r.Go(ctx, func(ctx context.Context) (any, error) {
		if err := tm.Start(); err != nil {
			return nil, err
		}
		defer tm.Close()
		outs, err := event.Await(ctx, event.Any(), tm)
		if err != nil {
			return nil, err
		}
		return outs[0].Event.Info(), nil
	})
	if err := r.Run(ctx); err != nil {
		t.Fatal(err)
	}
	v, err, _ := c.Outcome()
	if err != nil || v != "Timer(timeout=1ms, periodic)" {
		t.Fatalf("coroutine = %v, %v", v, err)
	}
	if msgs, _ := rep.snapshot(); len(msgs) != 0 {
		t.Fatalf("unexpected reports %v", msgs)
	}
}
