package async_test

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/uvevent/uvevent/async"
	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
)

// sleepFor waits d on r's clock in a coroutine.
func sleepFor(ctx context.Context, r *reactor.Reactor, d time.Duration) error {
	to, err := async.NewTimeout(r, d)
	if err != nil {
		return err
	}
	_, err = event.Await(ctx, event.Any(), to)
	if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
		return nil // the timeout fired: the time has passed
	}
	return err
}

func TestGroupWaitInOrderOfAddition(t *testing.T) {
	r, _ := newReactor(t)
	g, _ := async.NewGroup[string](testCtx(t), r, async.GroupOptions{})
	e1 := errors.New("task 1 failed")
	// Finishing order 2, 1, 0: results still come by order of addition.
	for i, d := range []time.Duration{6, 3, 1} {
		g.Spawn(func(ctx context.Context) (string, error) {
			if err := sleepFor(ctx, r, d*time.Millisecond); err != nil {
				return "", err
			}
			if i == 1 {
				return "", e1
			}
			return fmt.Sprint("task ", i), nil
		})
	}
	type waited struct {
		vs  []string
		err error
	}
	w, _ := reactor.Spawn(testCtx(t), r, func(ctx context.Context) (waited, error) {
		vs, err := g.Wait(ctx)
		return waited{vs, err}, nil
	})
	run(t, r)
	got, _ := outcome(t, w)
	vs, err := got.vs, got.err
	if diff := cmp.Diff([]string{"task 0", "", "task 2"}, vs); diff != "" {
		t.Errorf("values (-want +got):\n%s", diff)
	}
	if !errors.Is(err, e1) {
		t.Errorf("Wait error = %v, want task 1's", err)
	}
}

// With CancelOnError the first error cancels the rest, and Wait returns it.
func TestGroupCancelOnError(t *testing.T) {
	r, _ := newReactor(t)
	g, _ := async.NewGroup[int](testCtx(t), r, async.GroupOptions{CancelOnError: true})
	boom := errors.New("boom")
	g.Spawn(func(ctx context.Context) (int, error) { return 0, sleepFor(ctx, r, time.Hour) })
	g.Go(func(ctx context.Context) (int, error) { <-ctx.Done(); return 0, context.Cause(ctx) })
	g.Spawn(func(ctx context.Context) (int, error) { return 0, boom })
	w, _ := reactor.Spawn(testCtx(t), r, func(ctx context.Context) ([]int, error) { return g.Wait(ctx) })
	run(t, r)
	if _, err := outcome(t, w); err != boom {
		t.Errorf("Wait = %v, want the first error itself", err)
	}
	for i, task := range g.Tasks()[:2] {
		if _, err := outcome(t, task); !errors.Is(err, context.Canceled) && !errors.Is(err, boom) {
			t.Errorf("task %d ended with %v, want cancelled", i, err)
		}
	}
	if context.Cause(g.Context()) != boom {
		t.Errorf("group context cause = %v", context.Cause(g.Context()))
	}
}

func TestGroupWaitAnyAndN(t *testing.T) {
	r, _ := newReactor(t)
	ctx := testCtx(t)
	g, _ := async.NewGroup[int](ctx, r, async.GroupOptions{})
	g.Spawn(func(ctx context.Context) (int, error) { return 0, errors.New("fails at once") })
	g.Spawn(func(ctx context.Context) (int, error) { return 1, sleepFor(ctx, r, 2*time.Millisecond) })
	g.Spawn(func(ctx context.Context) (int, error) { return 2, sleepFor(ctx, r, time.Hour) })
	type anyN struct {
		Winner, Value int
		Done          []bool
	}
	w, _ := reactor.Spawn(ctx, r, func(ctx context.Context) (anyN, error) {
		i, v, err := g.WaitAny(ctx)
		if err != nil {
			return anyN{}, err
		}
		rs, err := g.WaitN(ctx, 1)
		done := make([]bool, len(rs))
		for i, r := range rs {
			done[i] = r.Done
		}
		g.Cancel()
		return anyN{i, v, done}, err
	})
	run(t, r)
	got, err := outcome(t, w)
	if diff := cmp.Diff(anyN{1, 1, []bool{true, true, false}}, got); diff != "" || err != nil {
		t.Errorf("WaitAny/WaitN (-want +got), err %v:\n%s", err, diff)
	}
	if _, err := outcome(t, g.Tasks()[2]); !errors.Is(err, context.Canceled) {
		t.Errorf("the long task ended with %v after Cancel", err)
	}
}

func TestGroupBadInput(t *testing.T) {
	r, _ := newReactor(t)
	if _, err := async.NewGroup[int](context.Background(), nil, async.GroupOptions{}); err == nil {
		t.Error("NewGroup(nil reactor) accepted")
	}
	g, _ := async.NewGroup[int](context.Background(), r, async.GroupOptions{})
	if _, err := g.Spawn(nil); err == nil {
		t.Error("Spawn(nil) accepted")
	}
	if vs, err := g.Wait(context.Background()); vs != nil || err != nil {
		t.Errorf("Wait on an empty group = %v, %v", vs, err)
	}
	// Two successes of no task can never happen: an error, not an empty
	// success, as WaitAny's.
	if rs, err := g.WaitN(context.Background(), 2); rs != nil || !errors.Is(err, event.ErrBadMode) || !errors.Is(err, syscall.EINVAL) {
		t.Errorf("WaitN(2) on an empty group = %v, %v; want nothing and ErrBadMode", rs, err)
	}
	if _, _, err := g.WaitAny(context.Background()); err == nil {
		t.Error("WaitAny on an empty group succeeded")
	}
}

func ExampleGroup() {
	r, _ := reactor.New(reactor.Options{})
	defer r.Close()
	ctx := context.Background()
	g, _ := async.NewGroup[int](ctx, r, async.GroupOptions{CancelOnError: true})
	for i := 1; i <= 3; i++ {
		g.Spawn(func(ctx context.Context) (int, error) { return i * i, nil })
	}
	sum, _ := reactor.Spawn(ctx, r, func(ctx context.Context) ([]int, error) { return g.Wait(ctx) })
	r.Run(ctx)
	fmt.Println(sum.Outcome())
	// Output: [1 4 9] true <nil>
}
