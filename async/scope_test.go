package async_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/uvevent/uvevent/async"
	"github.com/uvevent/uvevent/reactor"
)

// Cancelling a scope ends the contexts of its coroutines and of its
// children's; Wait leaves those cancellation errors out.
func TestScopeCancelReachesChildren(t *testing.T) {
	r, _ := newReactor(t)
	s, _ := async.NewScope(testCtx(t), r)
	child, _ := s.Child()
	grandchild, _ := child.Child()
	for _, sc := range []*async.Scope{s, child, grandchild} {
		async.Spawn(sc, func(ctx context.Context) (int, error) { return 0, sleepFor(ctx, r, time.Hour) })
		async.Go(sc, func(ctx context.Context) (int, error) { <-ctx.Done(); return 0, ctx.Err() })
	}
	w, _ := reactor.Spawn(testCtx(t), r, func(ctx context.Context) (int, error) {
		s.Cancel()
		return 0, s.Wait(ctx)
	})
	run(t, r)
	if _, err := outcome(t, w); err != nil {
		t.Errorf("Wait after Cancel = %v, want nil (cancellations left out)", err)
	}
	for _, sc := range []*async.Scope{s, child, grandchild} {
		if sc.Context().Err() == nil {
			t.Error("a scope's context outlived its cancel")
		}
	}
}

// The parent context cancels the scope; the scope's Context is what its
// coroutines get.
func TestScopeFollowsParentContext(t *testing.T) {
	r, _ := newReactor(t)
	parent, cancel := context.WithCancel(testCtx(t))
	s, _ := async.NewScope(parent, r)
	c, _ := async.Go(s, func(ctx context.Context) (bool, error) {
		<-ctx.Done()
		return ctx == s.Context() || context.Cause(ctx) == context.Canceled, nil
	})
	cancel()
	run(t, r)
	if ok, err := outcome(t, c); !ok || err != nil {
		t.Errorf("coroutine = %v, %v", ok, err)
	}
	if err := s.Close(testCtx(t)); err != nil {
		t.Errorf("Close = %v", err)
	}
	if _, err := async.Spawn(s, func(context.Context) (int, error) { return 0, nil }); !errors.Is(err, async.ErrScopeClosed) {
		t.Errorf("Spawn in a closed scope = %v", err)
	}
	if _, err := s.Child(); !errors.Is(err, async.ErrScopeClosed) {
		t.Errorf("Child of a closed scope = %v", err)
	}
}

// A coroutine that ignores its context outlives its scope's Close: it is
// reported and Close says so.
func TestScopeReportsCoroutineOutlivingIt(t *testing.T) {
	r, rep := newReactor(t)
	s, _ := async.NewScope(context.Background(), r)
	stop := make(chan struct{})
	stubborn, _ := async.Go(s, func(ctx context.Context) (int, error) { <-stop; return 1, nil })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- s.Close(ctx) }()
	if err := r.Serve(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, async.ErrOutlived) {
		t.Errorf("Close = %v, want ErrOutlived", err)
	}
	if diff := cmp.Diff([]string{"coroutine outlived its scope"}, rep.snapshot()); diff != "" {
		t.Errorf("reports (-want +got):\n%s", diff)
	}
	close(stop)
	run(t, r)
	if v, err := outcome(t, stubborn); v != 1 || err != nil {
		t.Errorf("stubborn = %v, %v", v, err)
	}
}

// A scope waiting on a stuck child is a deadlock: the report lists the
// waiting parent and the stuck child, each with where it waits.
func TestScopeWaitingOnStuckChildIsADeadlock(t *testing.T) {
	r, _ := newReactor(t)
	s, _ := async.NewScope(testCtx(t), r)
	ch, _ := async.NewChannel[int](r, 0)
	async.Spawn(s, func(ctx context.Context) (int, error) { return ch.Recv().Await(ctx) })
	w, _ := reactor.Spawn(testCtx(t), r, func(ctx context.Context) (int, error) { return 0, s.Wait(ctx) })
	run(t, r)
	_, err := outcome(t, w)
	dl := deadlockReport(t, err)
	if len(dl.Waiters) != 2 {
		t.Fatalf("report lists %d waiters: %+v", len(dl.Waiters), dl.Waiters)
	}
	child, parent := dl.Waiters[0], dl.Waiters[1]
	if !strings.Contains(child.Coroutine, "waiting at async/scope_test.go:") || child.Events[0] != "Channel.Recv(cap=0, buffered=0, senders=0, receivers=1)" {
		t.Errorf("child = %+v", child)
	}
	if !strings.HasPrefix(parent.Where, "async/scope_test.go:") || !strings.HasPrefix(parent.Events[0], "Coroutine 1 spawned at async/scope_test.go:") {
		t.Errorf("parent = %+v", parent)
	}
}

func ExampleScope() {
	r, _ := reactor.New(reactor.Options{})
	defer r.Close()
	s, _ := async.NewScope(context.Background(), r)
	for i := range 3 {
		async.Go(s, func(ctx context.Context) (int, error) {
			<-ctx.Done() // a worker that runs until its scope ends
			return i, nil
		})
	}
	closed, _ := reactor.Spawn(context.Background(), r, func(ctx context.Context) (string, error) {
		err := s.Close(ctx) // cancels the workers and waits for them
		return fmt.Sprint("closed, err=", err), nil
	})
	r.Run(context.Background())
	fmt.Println(closed.Outcome())
	// Output: closed, err=<nil> true <nil>
}
