package reactor_test

import (
	"context"
	"testing"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/buildmode"
	"github.com/uvevent/uvevent/reactor"
)

// TestCoroutineSwitchAllocatesNothing: a switch between two cooperative
// coroutines — one resolves a future the other awaits, gives the baton
// back in its own Await, and the other resumes — allocates nothing, on
// either driver: the wait's state is the coroutine's (reused from one
// wait to the next), the future passes no boxed value to a typed wait,
// and the hidden timer that runs the ready coroutines after a loop turn
// is started again rather than made anew. The futures are made ahead (a
// future is one-shot: making one is its own allocation, not the
// switch's). The allocations are counted over k round trips, inside the
// first coroutine, for k = 10 and for k = 1000, seven times each after a
// warm-up: the fewest for each k are the same exactly when a round trip
// allocates nothing, the loop turns that the bound of a pass (maxSteps)
// brings between them included. (The fewest: a count is the process's, and
// may catch one allocation of the runtime's own, as AllocsPerRun changes
// GOMAXPROCS, or of a goroutine another test left; three counts each once
// all caught one in a -count=3 -shuffle run of the package.)
func TestCoroutineSwitchAllocatesNothing(t *testing.T) {
	forEachDriver(t, func(t *testing.T, r *reactor.Reactor) {
		n := switchRoundTrips()
		toA, toB := make([]*event.Future[int], n), make([]*event.Future[int], n)
		for i := range n {
			toA[i], toB[i] = event.NewFuture[int](r), event.NewFuture[int](r)
		}
		switchAllocs(t, r, switchLane{
			toB:   func(i, v int) { toB[i].Resolve(v) },
			fromA: func(ctx context.Context, i int) (int, error) { return toA[i].Await(ctx) },
			toA:   func(i, v int) { toA[i].Resolve(v) },
			fromB: func(ctx context.Context, i int) (int, error) { return toB[i].Await(ctx) },
		})
	})
}

// switchRoundTrips is the number of round trips switchAllocs runs.
func switchRoundTrips() int {
	total := 1 // the last round trip, after the counts: the second coroutine's end is no switch
	for range switchReps {
		total += 2 * (switchFew + switchMany) // AllocsPerRun calls f twice: a warm-up, then the count
	}
	return total
}

const switchFew, switchMany, switchReps = 10, 1000, 8 // the first rep warms up

// switchLane is how two coroutines hand the value of round trip i over.
type switchLane struct {
	toB, toA     func(i, v int)
	fromA, fromB func(ctx context.Context, i int) (int, error)
}

// switchAllocs runs switchRoundTrips round trips between two cooperative
// coroutines over l and fails unless the fewest allocations of runs of
// switchFew and switchMany round trips are equal.
func switchAllocs(t *testing.T, r *reactor.Reactor, l switchLane) {
	t.Helper()
	ctx := runCtx(t)
	total := switchRoundTrips()
	var fewest [2]float64 // for few and many, written by the first coroutine
	_, err := reactor.Spawn(ctx, r, func(ctx context.Context) (int, error) {
		i := 0
		var err error
		roundTrips := func(k int) {
			for end := i + k; i < end && err == nil; i++ {
				l.toB(i, i+1000) // beyond the values Go boxes without allocating
				var v int
				if v, err = l.fromA(ctx, i); err == nil && v != i+1000 {
					t.Errorf("round trip %d came back with %d", i, v)
				}
			}
		}
		for rep := range switchReps {
			for j, k := range []int{switchFew, switchMany} {
				n := testing.AllocsPerRun(1, func() { roundTrips(k) })
				if rep == 1 || rep > 1 && n < fewest[j] {
					fewest[j] = n
				}
			}
		}
		roundTrips(1)
		return i, err
	})
	if err != nil {
		t.Fatal(err)
	}
	b, err := reactor.Spawn(ctx, r, func(ctx context.Context) (int, error) {
		for i := range total {
			v, err := l.fromB(ctx, i)
			if err != nil {
				return i, err
			}
			l.toA(i, v)
		}
		return total, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if n, ok, err := b.Outcome(); !ok || err != nil || n != total {
		t.Fatalf("the second coroutine ended with %d, %t, %v; want %d round trips", n, ok, err, total)
	}
	if mode := buildmode.Instrumented(); mode != "" {
		t.Logf("%.0f allocations over the longer run, %.0f over the shorter, not judged: a -%s build changes what allocates", fewest[1], fewest[0], mode)
	} else if got, want := fewest[1], fewest[0]; got != want {
		t.Errorf("%.0f allocations over %d round trips, %.0f over %d: a round trip allocates %.3f, want 0",
			got, switchMany, want, switchFew, (got-want)/float64(switchMany-switchFew))
	}
}

// TestCoroutineResumedByACallbackAllocatesNothing: a coroutine that
// awaits a future a timer's callback resolves, and resumes on a later
// turn, allocates nothing per resume, on either driver: making it ready
// from a callback (schedule, outside a pass) starts the reactor's one
// hidden timer through a function value made once. As in
// TestCoroutineSwitchAllocatesNothing, the futures are made ahead, and the
// fewest allocations of runs of 10 and of 1000 resumes must be equal.
func TestCoroutineResumedByACallbackAllocatesNothing(t *testing.T) {
	forEachDriver(t, func(t *testing.T, r *reactor.Reactor) {
		ctx := runCtx(t)
		const few, many, reps = 10, 1000, switchReps // the first rep warms up
		total := 0
		for range reps {
			total += 2 * (few + many) // AllocsPerRun calls f twice: a warm-up, then the count
		}
		fs := make([]*event.Future[int], total)
		for i := range total {
			fs[i] = event.NewFuture[int](r)
		}
		tm, err := r.NewTimer(0, 0)
		if err != nil {
			t.Fatal(err)
		}
		fired := 0 // loop-owned
		if _, err := tm.OnFire(func(error) {
			fs[fired].Resolve(fired)
			fired++
		}); err != nil {
			t.Fatal(err)
		}
		var fewest [2]float64 // for few and many, written by the coroutine
		co, err := reactor.Spawn(ctx, r, func(ctx context.Context) (int, error) {
			i := 0
			var err error
			resumes := func(k int) {
				for end := i + k; i < end && err == nil; i++ {
					if err = tm.Start(); err != nil {
						return
					}
					var v int
					if v, err = fs[i].Await(ctx); err == nil && v != i {
						t.Errorf("resume %d came with %d", i, v)
					}
				}
			}
			for rep := range reps {
				for j, k := range []int{few, many} {
					n := testing.AllocsPerRun(1, func() { resumes(k) })
					if rep == 1 || rep > 1 && n < fewest[j] {
						fewest[j] = n
					}
				}
			}
			return i, err
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Run(ctx); err != nil {
			t.Fatal(err)
		}
		if n, ok, err := co.Outcome(); !ok || err != nil || n != total {
			t.Fatalf("the coroutine ended with %d, %t, %v; want %d resumes", n, ok, err, total)
		}
		if mode := buildmode.Instrumented(); mode != "" {
			t.Logf("%.0f allocations over the longer run, %.0f over the shorter, not judged: a -%s build changes what allocates", fewest[1], fewest[0], mode)
		} else if got, want := fewest[1], fewest[0]; got != want {
			t.Errorf("%.0f allocations over %d resumes, %.0f over %d: a resume allocates %.3f, want 0",
				got, many, want, few, (got-want)/float64(many-few))
		}
	})
}

// TestHandoffSwitchAllocatesNothing: the same switch through two
// handoffs, K1's own exchange, allocates nothing per round trip on either
// driver, with nothing made ahead: the value a wait reads is left in the
// handoff rather than boxed, and the handoff is empty again after it. As
// above, the fewest allocations of runs of 10 and of 1000 round trips
// must be equal.
func TestHandoffSwitchAllocatesNothing(t *testing.T) {
	forEachDriver(t, func(t *testing.T, r *reactor.Reactor) {
		toA, _ := event.NewHandoff[int](r)
		toB, _ := event.NewHandoff[int](r)
		switchAllocs(t, r, switchLane{
			toB:   func(_, v int) { toB.Resolve(v) },
			fromA: func(ctx context.Context, _ int) (int, error) { return toA.Await(ctx) },
			toA:   func(_, v int) { toA.Resolve(v) },
			fromB: func(ctx context.Context, _ int) (int, error) { return toB.Await(ctx) },
		})
	})
}
