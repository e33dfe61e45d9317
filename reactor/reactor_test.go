package reactor_test

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/eventkind"
	"github.com/uvevent/uvevent/reactor"
)

// A callback run by a direct operation (no loop running) may call Stats,
// and Close refuses instead of deadlocking.
func TestDirectCallbackMayCallStatsAndClose(t *testing.T) {
	r, _ := newReactor(t)
	f := event.NewFuture[any](r)
	var active int
	var closeErr error
	event.Subscribe(f, func(event.Event, any, error) {
		active = r.Stats().Active
		closeErr = r.Close()
	})
	done := make(chan struct{})
	go func() {
		f.Resolve(1)
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second): // a safety net, not a timing
		t.Fatal("Resolve with a callback calling Stats never returned")
	}
	if active != 0 || !errors.Is(closeErr, reactor.ErrRunning) {
		t.Fatalf("in the callback: Active=%d, Close=%v; want 0 and ErrRunning", active, closeErr)
	}
}

// A loop goroutine must not block on another loop: Call is refused.
func TestCrossReactorCallRefused(t *testing.T) {
	a, _ := newReactor(t)
	b, _ := newReactor(t)
	stopA, stopB := serve(t, a), serve(t, b)
	defer stopA()
	defer stopB()
	tb, _ := b.NewTimer(time.Hour, 0)
	var execErr error
	var info string
	a.Call(func() {
		execErr = b.Call(func() {})
		info = tb.Info()
	})
	if !errors.Is(execErr, event.ErrOnLoop) {
		t.Fatalf("Call on b from a's loop = %v, want ErrOnLoop", execErr)
	}
	if !strings.Contains(info, event.ErrOnLoop.Error()) {
		t.Fatalf("Info across loops = %q, want the refusal", info)
	}
	// Post is the way across: it does not wait.
	got := make(chan bool, 1)
	a.Call(func() { b.Post(func() { got <- b.Owner().Owned() }) })
	if !<-got {
		t.Fatal("an operation posted across loops did not run on the other loop")
	}
}

// A coroutine waiting on an event the reactor cannot see (another owner's)
// is not deadlocked.
func TestNoDeadlockOnForeignEvent(t *testing.T) {
	r, rep := newReactor(t)
	var other event.Serial
	f := event.NewFuture[any](&other)
	c, _ := reactor.Go(context.Background(), r, func(ctx context.Context) (any, error) {
		outs, err := event.Await(ctx, event.Any(), f)
		if err != nil {
			return nil, err
		}
		return outs[0].Result, nil
	})
	go func() {
		waitFor(t, "the coroutine to wait", func() bool { return eventkind.Subscribers(f) == 1 })
		f.Resolve("from outside")
	}()
	if err := r.Run(runCtx(t)); err != nil {
		t.Fatal(err)
	}
	if v, _, err := c.Outcome(); err != nil || v != "from outside" {
		t.Fatalf("coroutine = %v, %v", v, err)
	}
	if msgs, _ := rep.snapshot(); len(msgs) != 0 {
		t.Fatalf("reports %v, want none", msgs)
	}
}

// A wait bounded by Within ends with ErrTimeout, not a deadlock report.
func TestWithinIsNotADeadlock(t *testing.T) {
	r, rep := newReactor(t)
	f := event.NewFuture[any](r)
	c, _ := reactor.Go(context.Background(), r, func(ctx context.Context) (any, error) {
		return event.Await(ctx, event.Any().Within(10*time.Millisecond), f)
	})
	if err := r.Run(runCtx(t)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Outcome(); !errors.Is(err, event.ErrTimeout) {
		t.Fatalf("coroutine ended with %v, want ErrTimeout", err)
	}
	if msgs, _ := rep.snapshot(); len(msgs) != 0 {
		t.Fatalf("reports %v, want none", msgs)
	}
}

// Close ends the waits on its events; a future completed afterwards keeps
// its outcome.
func TestCloseEndsWaiters(t *testing.T) {
	r, err := reactor.New(reactor.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f := event.NewFuture[any](r)
	res := make(chan error, 1)
	go func() {
		_, err := event.Await(context.Background(), event.Any(), f)
		res <- err
	}()
	waitFor(t, "the waiter to subscribe", func() bool { return eventkind.Subscribers(f) == 1 })
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-res; !errors.Is(err, reactor.ErrReactorClosed) {
		t.Fatalf("waiter ended with %v, want ErrReactorClosed", err)
	}
	if err := f.Resolve(7); !errors.Is(err, reactor.ErrReactorClosed) {
		t.Fatalf("Resolve after Close = %v, want ErrReactorClosed", err)
	}
	if v, ok, _ := f.Outcome(); !ok || v != 7 {
		t.Fatalf("Outcome after Close = %v, %v; want 7, true", v, ok)
	}
	if _, err := event.Await(context.Background(), event.Any(), f); !errors.Is(err, reactor.ErrReactorClosed) {
		t.Fatalf("Await after Close = %v, want ErrReactorClosed", err)
	}
}

// A panicking notify hook is reported; the notification goes on.
func TestNotifyHookPanicIsReported(t *testing.T) {
	r, rep := newReactor(t)
	tm, _ := r.NewTimer(0, 0)
	tm.SetNotifyHook(func(event.Event, any, error) (any, error, bool) { panic("hook") })
	called := false
	event.Subscribe(tm, func(event.Event, any, error) { called = true })
	tm.Start()
	if err := r.Run(runCtx(t)); err != nil {
		t.Fatal(err)
	}
	msgs, _ := rep.snapshot()
	if diff := cmp.Diff([]string{"notify hook panicked"}, msgs); diff != "" || !called {
		t.Fatalf("reports (-want +got):\n%s\ncallback called: %v", diff, called)
	}
}

// A cancelled run leaves no stale flag behind that would make a later Serve
// spin: an idle Serve parks.
func TestRunIsNotStuckOnStaleCancel(t *testing.T) {
	r, _ := newReactor(t)
	for range 50 {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := r.Serve(ctx); !errors.Is(err, context.Canceled) {
			t.Fatalf("Serve with a cancelled context = %v", err)
		}
	}
	before := r.Stats().Iterations
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Serve(ctx) }()
	waitFor(t, "serving", func() bool { return r.Stats().Running })
	time.Sleep(20 * time.Millisecond) // let a spinning loop show itself
	turns := r.Stats().Iterations - before
	cancel()
	<-done
	if turns > 10 {
		t.Fatalf("an idle Serve turned %d times: it spins", turns)
	}
}

// A failed coroutine made off the loop whose error nobody observed is
// reported when it is collected (GoOwned: the report follows the Go
// object); one whose outcome was read is not.
func TestUnhandledErrorReportedAtCollection(t *testing.T) {
	r, rep := newReactor(t)
	ctx := context.Background()
	func() {
		reactor.Go(ctx, r, func(context.Context) (any, error) { return nil, errors.New("lost") })
		seen, _ := reactor.Go(ctx, r, func(context.Context) (any, error) { return nil, errors.New("seen") })
		if err := r.Run(runCtx(t)); err != nil {
			t.Fatal(err)
		}
		seen.Outcome()
	}()
	waitFor(t, "the unhandled error report", func() bool {
		runtime.GC()
		r.RunOnce(ctx) // the report is posted to the loop
		msgs, _ := rep.snapshot()
		return len(msgs) > 0
	})
	runtime.GC()
	r.RunOnce(ctx)
	msgs, errs := rep.snapshot()
	if diff := cmp.Diff([]string{"unhandled error of a collected coroutine"}, msgs); diff != "" {
		t.Fatalf("reports (-want +got):\n%s", diff)
	}
	if ue := (*event.UnhandledError)(nil); !errors.As(errs[0], &ue) || ue.Err.Error() != "lost" || ue.Site == "" {
		t.Fatalf("reported error = %#v, want an *event.UnhandledError of \"lost\" with its site", errs[0])
	}
}
