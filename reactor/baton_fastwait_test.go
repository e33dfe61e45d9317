package reactor_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/eventkind"
	"github.com/uvevent/uvevent/reactor"
)

// These tests pin the rules that a cooperative coroutine's wait on one
// event of its own reactor keeps: the commonest wait, which Await serves
// with a dedicated path (no subscription allocated, the coroutine's state
// reused, the coroutine made ready from the resolver's pass).

// A coroutine awaiting what is done already keeps the baton: the other
// ready coroutine does not run in between. Resolved, resolved then closed,
// and closed without an outcome (ErrClosed), through AwaitValue and Await.
func TestFastWaitOnDoneEventKeepsBaton(t *testing.T) {
	r, _ := newReactor(t)
	ctx := runCtx(t)
	otherRan := false // loop state: both coroutines hold the baton to touch it
	type step struct {
		Got       any
		Err       string
		OtherRan  bool
		Subscribe int
	}
	var got []step
	record := func(v any, err error, ev event.Event) {
		s := step{Got: v, OtherRan: otherRan, Subscribe: eventkind.Subscribers(ev)}
		if err != nil {
			s.Err = err.Error()
		}
		got = append(got, s)
	}
	reactor.Spawn(ctx, r, func(ctx context.Context) (any, error) {
		resolved := event.NewFuture[int](r)
		resolved.Resolve(1)
		v, err := resolved.Await(ctx)
		record(v, err, resolved)

		closed := event.NewFuture[int](r)
		closed.Resolve(2)
		closed.Close()
		outs, err := event.Await(ctx, event.Any(), closed)
		record(outs[0].Result, err, closed)

		empty := event.NewFuture[int](r)
		empty.Close()
		v, err = empty.Await(ctx)
		record(v, err, empty)

		failed := event.NewFuture[int](r)
		failed.Reject(errors.New("boom"))
		v, err = failed.Await(ctx)
		record(v, err, failed)
		return nil, nil
	})
	reactor.Spawn(ctx, r, func(context.Context) (any, error) {
		otherRan = true
		return nil, nil
	})
	mustRun(t, r, ctx)
	want := []step{
		{Got: 1},
		{Got: 2},
		{Got: 0, Err: event.ErrClosed.Error()},
		{Got: 0, Err: "boom"},
	}
	checkDiff(t, "waits on done futures", want, got)
	if !otherRan {
		t.Error("the other coroutine never ran")
	}
}

// A coroutine cancelled while it waits ends its wait with the cancel's
// error and leaves the future without its subscription; resolving the
// future afterwards wakes nobody. The cancel comes from another cooperative
// coroutine (holding the baton) and from a plain goroutine.
func TestFastWaitCancelled(t *testing.T) {
	t.Run("by a coroutine", func(t *testing.T) {
		r, _ := newReactor(t)
		ctx := runCtx(t)
		f := event.NewFuture[int](r)
		w, _ := reactor.Spawn(ctx, r, func(ctx context.Context) (int, error) { return f.Await(ctx) })
		var subsAfter int
		reactor.Spawn(ctx, r, func(ctx context.Context) (any, error) {
			w.Cancel() // w waits: it ran first and gave the baton here
			_, err := w.Await(ctx)
			subsAfter = eventkind.Subscribers(f)
			return nil, err
		})
		mustRun(t, r, ctx)
		checkCancelled(t, w, f, subsAfter)
	})
	t.Run("by a goroutine", func(t *testing.T) {
		r, _ := newReactor(t)
		release, err := r.Hold() // this goroutine is what the waiter waits for: no deadlock
		if err != nil {
			t.Fatal(err)
		}
		defer release()
		stop := serve(t, r)
		defer stop()
		f := event.NewFuture[int](r)
		w, _ := reactor.Spawn(runCtx(t), r, func(ctx context.Context) (int, error) { return f.Await(ctx) })
		waitFor(t, "the coroutine to wait", func() bool { return strings.Contains(w.Info(), ", waiting at ") })
		w.Cancel()
		if _, err := w.Await(runCtx(t)); !errors.Is(err, context.Canceled) {
			t.Fatalf("Await = %v, want context.Canceled", err)
		}
		checkCancelled(t, w, f, eventkind.Subscribers(f))
	})
}

func checkCancelled(t *testing.T, w *reactor.Coroutine[int], f *event.Future[int], subsAfter int) {
	t.Helper()
	if _, _, err := w.Outcome(); !errors.Is(err, context.Canceled) {
		t.Errorf("the waiter ended with %v, want context.Canceled", err)
	}
	if subsAfter != 0 {
		t.Errorf("the future keeps %d subscribers after the cancelled wait", subsAfter)
	}
	if err := f.Resolve(1); err != nil {
		t.Errorf("Resolve after the cancelled wait: %v", err)
	}
}

// The resolver's end does not matter to the waiter: a resolver that panics
// or calls runtime.Goexit right after Resolve still passes the value on,
// and a subscriber of the same future that panics in the pass that wakes
// the waiter is reported without keeping the waiter asleep.
func TestFastWaitResolverPanicsOrExits(t *testing.T) {
	ends := map[string]func(){
		"panic":  func() { panic("resolver down") },
		"Goexit": runtime.Goexit,
	}
	for name, end := range ends {
		t.Run(name, func(t *testing.T) {
			r, rep := newReactor(t)
			ctx := runCtx(t)
			f := event.NewFuture[int](r)
			event.Subscribe(f, func(event.Event, any, error) { panic("subscriber down") })
			w, _ := reactor.Spawn(ctx, r, func(ctx context.Context) (int, error) { return f.Await(ctx) })
			res, _ := reactor.Spawn(ctx, r, func(context.Context) (any, error) {
				f.Resolve(42)
				end()
				return nil, nil
			})
			mustRun(t, r, ctx)
			if v, _, err := w.Outcome(); v != 42 || err != nil {
				t.Errorf("the waiter got %v, %v; want 42", v, err)
			}
			_, _, err := res.Outcome()
			var pe *event.PanicError
			if name == "panic" && !errors.As(err, &pe) || name == "Goexit" && !errors.Is(err, reactor.ErrGoexit) {
				t.Errorf("the resolver ended with %v", err)
			}
			if msgs, _ := rep.snapshot(); !cmp.Equal(msgs, []string{"callback panicked"}) {
				t.Errorf("reports = %q, want the subscriber's panic", msgs)
			}
		})
	}
}

// One coroutine waits many times in a row on different events: the state
// it reuses starts each wait clean. A timer the wait starts is stopped
// after it; a failed future's error does not leak into the next wait.
func TestFastWaitReusedAcrossWaits(t *testing.T) {
	r, _ := newReactor(t)
	ctx := runCtx(t)
	var got []string
	add := func(v any, err error) { got = append(got, fmt.Sprintf("%v %v", v, err)) }
	var refs []int
	later := event.NewFuture[string](r)
	reactor.Spawn(ctx, r, func(ctx context.Context) (any, error) {
		for range 3 {
			tm, err := r.NewTimer(time.Millisecond, 0)
			if err != nil {
				return nil, err
			}
			outs, err := event.Await(ctx, event.Any(), tm)
			add(outs[0].Done, err)
			refs = append(refs, eventkind.LoopRefs(tm))
			tm.Close()

			bad := event.NewFuture[int](r)
			bad.Reject(errors.New("bad"))
			add(bad.Await(ctx))

			v, err := later.Await(ctx) // resolved by the other coroutine, once
			add(v, err)
		}
		return nil, nil
	})
	reactor.Spawn(ctx, r, func(context.Context) (any, error) { return nil, later.Resolve("later") })
	mustRun(t, r, ctx)
	want := []string{"true <nil>", "0 bad", "later <nil>", "true <nil>", "0 bad", "later <nil>", "true <nil>", "0 bad", "later <nil>"}
	checkDiff(t, "outcomes", want, got)
	checkDiff(t, "timer Starts held after the waits", []int{0, 0, 0}, refs)
}

// Coroutines made ready in one pass run in the order they became ready.
func TestFastWaitReadyInOrder(t *testing.T) {
	r, _ := newReactor(t)
	ctx := runCtx(t)
	fs := []*event.Future[int]{event.NewFuture[int](r), event.NewFuture[int](r), event.NewFuture[int](r)}
	var order []int
	for i, f := range fs {
		reactor.Spawn(ctx, r, func(ctx context.Context) (any, error) {
			v, err := f.Await(ctx)
			order = append(order, i*10+v)
			return nil, err
		})
	}
	reactor.Spawn(ctx, r, func(context.Context) (any, error) {
		fs[1].Resolve(1) // the order of the Resolves, not of the waiters
		fs[0].Resolve(2)
		fs[2].Resolve(3)
		return nil, nil
	})
	mustRun(t, r, ctx)
	checkDiff(t, "waiters ran in the order", []int{11, 2, 23}, order)
}

// The value of a future reaches every kind of subscriber alongside a
// coroutine's typed wait (which reads it itself): another callback, a
// notify hook, an untyped Await's Outcome, and a late subscriber's replay.
func TestFastWaitFutureValueStillDelivered(t *testing.T) {
	r, _ := newReactor(t)
	ctx := runCtx(t)
	f := event.NewFuture[int](r)
	var seen []any
	event.Subscribe(f, func(_ event.Event, v any, _ error) { seen = append(seen, v) })
	g := event.NewFuture[int](r)
	g.SetNotifyHook(func(_ event.Event, v any, err error) (any, error, bool) {
		seen = append(seen, v)
		return v, err, true
	})
	h := event.NewFuture[int](r)
	k := event.NewFuture[int](r) // only a typed wait: delivered without boxing
	// Each waiter waits before the resolver runs: every value is notified,
	// none replayed.
	typed := make([]int, 3)
	for i, fut := range []*event.Future[int]{f, g, k} {
		reactor.Spawn(ctx, r, func(ctx context.Context) (any, error) {
			v, err := fut.Await(ctx)
			typed[i] = v
			return nil, err
		})
	}
	var untyped any
	reactor.Spawn(ctx, r, func(ctx context.Context) (any, error) {
		outs, err := event.Await(ctx, event.Any(), h)
		untyped = outs[0].Result
		return nil, err
	})
	reactor.Spawn(ctx, r, func(context.Context) (any, error) {
		f.Resolve(1000)
		g.Resolve(2000)
		h.Resolve(3000)
		k.Resolve(4000)
		return nil, nil
	})
	mustRun(t, r, ctx)
	// A late subscriber gets the value replayed, not what the typed wait was told.
	var replayed any
	if err := k.Replay(event.NewCallback(func(_ event.Event, v any, _ error) { replayed = v })); err != nil {
		t.Fatal(err)
	}
	seen = append(seen, untyped, replayed)
	checkDiff(t, "typed waits", []int{1000, 2000, 4000}, typed)
	checkDiff(t, "callback, hook, Outcome and replay saw", []any{1000, 2000, 3000, 4000}, seen)
}

// A coroutine waiting on the fast path is known to the deadlock check with
// its wait site, and its Info says where it waits.
func TestFastWaitInfoAndDeadlock(t *testing.T) {
	r, _ := newReactor(t)
	ctx := runCtx(t)
	f := event.NewFuture[int](r)
	_, _, line, _ := runtime.Caller(0)
	w, _ := reactor.Spawn(ctx, r, func(ctx context.Context) (int, error) { return f.Await(ctx) })
	var info string
	reactor.Spawn(ctx, r, func(context.Context) (any, error) {
		info = w.Info() // from a coroutine: w waits, this one holds the baton
		return nil, nil
	})
	mustRun(t, r, ctx)
	site := "reactor/baton_fastwait_test.go:" + strconv.Itoa(line+1)
	want := "Coroutine 1 spawned at " + site + ", waiting at " + site + " on Future(pending)"
	if info != want {
		t.Errorf("Info = %q, want %q", info, want)
	}
	_, _, err := w.Outcome()
	var dl *reactor.DeadlockError
	if !errors.As(err, &dl) || len(dl.Waiters) != 1 || dl.Waiters[0].Where != site {
		t.Errorf("the waiter ended with %v, want a deadlock report naming %s", err, site)
	}
}

// mustRun runs r until nothing is left to do.
func mustRun(t *testing.T, r *reactor.Reactor, ctx context.Context) {
	t.Helper()
	if err := r.Run(ctx); err != nil {
		t.Fatal(err)
	}
}

// checkDiff reports what differs from want.
func checkDiff(t *testing.T, what string, want, got any) {
	t.Helper()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s (-want +got):\n%s", what, diff)
	}
}

// Close while the loop serves in another goroutine ends a coroutine's wait
// on the fast path with ErrReactorClosed, and the future can no longer be
// resolved.
func TestFastWaitCloseWhileServing(t *testing.T) {
	r, _ := newReactor(t)
	release, err := r.Hold() // what the waiter waits for is outside: no deadlock
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	served := make(chan error, 1)
	go func() { served <- r.Serve(context.Background()) }()
	f := event.NewFuture[int](r)
	w, _ := reactor.Spawn(runCtx(t), r, func(ctx context.Context) (int, error) { return f.Await(ctx) })
	waitFor(t, "the coroutine to wait", func() bool { return strings.Contains(w.Info(), ", waiting at ") })
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-served; err != nil {
		t.Errorf("Serve returned %v after Close", err)
	}
	waitFor(t, "the coroutine to end", w.Done)
	if _, _, err := w.Outcome(); !errors.Is(err, reactor.ErrReactorClosed) {
		t.Errorf("the waiter ended with %v, want ErrReactorClosed", err)
	}
	if err := f.Resolve(1); !errors.Is(err, reactor.ErrReactorClosed) {
		t.Errorf("Resolve after Close = %v, want ErrReactorClosed", err)
	}
}
