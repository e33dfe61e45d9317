package reactor_test

import (
	"context"
	"testing"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
)

// pingPong spawns two cooperative coroutines that hand a value back and
// forth through futures until stop (loop-owned) says so: the baton passes
// straight from one to the other, never through an idle loop. rounds
// counts their round trips (loop-owned).
func pingPong(t *testing.T, ctx context.Context, r *reactor.Reactor, stop func() bool, rounds *int) []*reactor.Coroutine[int] {
	t.Helper()
	inA, inB := event.NewFuture[int](r), event.NewFuture[int](r)
	a, errA := reactor.Spawn(ctx, r, func(ctx context.Context) (int, error) {
		for i := 0; ; i++ {
			inA = event.NewFuture[int](r)
			if stop() {
				inB.Resolve(-1)
				return i, nil
			}
			inB.Resolve(i)
			if _, err := inA.Await(ctx); err != nil {
				return i, err
			}
			*rounds++
		}
	})
	b, errB := reactor.Spawn(ctx, r, func(ctx context.Context) (int, error) {
		for i := 0; ; i++ {
			v, err := inB.Await(ctx)
			if err != nil || v < 0 {
				return i, err
			}
			inB = event.NewFuture[int](r)
			inA.Resolve(v)
		}
	})
	if errA != nil || errB != nil {
		t.Fatal(errA, errB)
	}
	return []*reactor.Coroutine[int]{a, b}
}

// Two coroutines that ping-pong forever do not keep the loop from its
// turns nor the baton from others: a timer falls due and fires, an
// operation posted from another goroutine runs, and a third coroutine,
// made ready by the timer's callback, gets the baton, all while the two
// pass it on between themselves; the two stop only when all three have
// happened. (The deadline only turns a hang into a failure: it would end
// the two coroutines' waits with its error.)
func TestCoroutinePingPongLetsTheLoopTurn(t *testing.T) {
	forEachDriver(t, func(t *testing.T, r *reactor.Reactor) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var fired, posted, third bool // loop-owned
		var rounds, roundsAtTimer int
		pair := pingPong(t, ctx, r, func() bool { return fired && posted && third }, &rounds)
		tm, err := r.NewTimer(time.Millisecond, 0)
		if err != nil {
			t.Fatal(err)
		}
		event.Subscribe(tm, func(event.Event, any, error) {
			fired, roundsAtTimer = true, rounds
			go r.Post(func() { posted = true }) // from outside the loop
			if _, err := reactor.Spawn(ctx, r, func(context.Context) (int, error) {
				third = true
				return 0, nil
			}); err != nil {
				t.Error(err)
			}
		})
		tm.Start()
		if err := r.Run(ctx); err != nil {
			t.Fatal(err)
		}
		if !fired || !posted || !third {
			t.Fatalf("timer fired %v, posted operation ran %v, third coroutine ran %v", fired, posted, third)
		}
		for _, c := range pair {
			if _, ok, err := c.Outcome(); !ok || err != nil {
				t.Errorf("%s: outcome %v, %v: it did not stop by itself", c.Info(), ok, err)
			}
		}
		if roundsAtTimer == 0 {
			t.Error("the timer fired before the coroutines ping-ponged: nothing was shown")
		}
	})
}
