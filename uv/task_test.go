package uv_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/uv"
)

// newPool makes a task pool or fails the test.
func newPool(t testing.TB, workers int) *uv.TaskPool {
	t.Helper()
	p, err := uv.NewTaskPool(workers)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// queue queues fn on p or fails the test.
func queue(t testing.TB, p *uv.TaskPool, u *uv.UvtReactor, fn func(context.Context) (any, error)) *uv.Task[any] {
	t.Helper()
	task, err := uv.QueueTaskIn(p, u.Reactor, fn)
	if err != nil {
		t.Fatalf("Queue: %v", err)
	}
	return task
}

// The lifecycle: queued and active, the result on the loop, done and
// closed, replayed; errors and panics are outcomes too.
func TestTaskLifecycle(t *testing.T) {
	u := uv.UvtNewReactor(t)
	p := newPool(t, 2)
	errBoom := errors.New("boom")
	var ok, failed, panicked *uv.Task[any]
	var calls *uv.UvtCounter
	uv.UvtMust(t, u.Call(func() { // nothing completes before the subscriptions
		ok = queue(t, p, u, func(context.Context) (any, error) { return 42, nil })
		failed = queue(t, p, u, func(context.Context) (any, error) { return nil, errBoom })
		panicked = queue(t, p, u, func(context.Context) (any, error) { panic("oops") })
		calls = uv.UvtSubscribe(t, ok, u.Owner().Owned)
		uv.UvtSubscribe(t, failed, u.Owner().Owned)
		uv.UvtSubscribe(t, panicked, u.Owner().Owned)
	}))
	uv.UvtMust(t, u.Run(context.Background())) // returns when the tasks are done
	want := []uv.UvtCall{{Event: ok, Result: 42, OnLoop: true}}
	if diff := cmp.Diff(want, calls.Calls(), eqEvent, cmpopts.EquateErrors()); diff != "" {
		t.Errorf("notifications (-want +got):\n%s", diff)
	}
	if got := ok.Info(); got != "Task(done)" {
		t.Errorf("Info = %q, want Task(done)", got)
	}
	if res, _ := replayed(t, ok); res != 42 {
		t.Errorf("replay %v, want 42", res)
	}
	if _, err := replayed(t, failed); !errors.Is(err, errBoom) {
		t.Errorf("failed task: %v, want boom", err)
	}
	var pe *event.PanicError
	if _, err := replayed(t, panicked); !errors.As(err, &pe) || pe.Value != "oops" {
		t.Errorf("panicking task: %v, want a PanicError", err)
	}
	if err := ok.Start(); !errors.Is(err, event.ErrClosed) {
		t.Errorf("Start after the end = %v, want ErrClosed", err)
	}
	uv.UvtShutdown(t, u, false)
}

// With one worker busy, a queued task can be taken back: it completes with
// context.Canceled and never runs; a started one cannot (EBUSY). Work
// starts in queue order and never more than the pool's size at once.
func TestTaskCancelBeforeStartAndBound(t *testing.T) {
	u := uv.UvtNewReactor(t)
	stop := uv.UvtServe(t, u)
	p := newPool(t, 1)
	gate, started := make(chan struct{}), make(chan struct{})
	first := queue(t, p, u, func(context.Context) (any, error) { close(started); <-gate; return "first", nil })
	var ran atomic.Bool
	second := queue(t, p, u, func(context.Context) (any, error) { ran.Store(true); return nil, nil })
	<-started
	if got := second.Info(); got != "Task(queued)" {
		t.Errorf("Info = %q, want Task(queued)", got)
	}
	uv.UvtMust(t, second.Cancel())
	if got := awaitOne(t, second); !errors.Is(got.Err, context.Canceled) {
		t.Errorf("canceled task: %+v, want context.Canceled", got)
	}
	if err := first.Cancel(); !errors.Is(err, uv.ErrTaskStarted) || !errors.Is(err, syscall.EBUSY) {
		t.Errorf("Cancel of a running task = %v, want ErrTaskStarted (EBUSY)", err)
	}
	if got := first.Info(); got != "Task(running)" {
		t.Errorf("Info = %q, want Task(running)", got)
	}
	close(gate)
	if got := awaitOne(t, first); got.Result != "first" {
		t.Errorf("first task: %+v", got)
	}
	if ran.Load() {
		t.Error("the canceled task ran")
	}

	// The bound and the order.
	p2 := newPool(t, 3)
	var mu sync.Mutex
	var order []int
	var now, peak atomic.Int32
	tasks := make([]event.Event, 30)
	for i := range tasks {
		tasks[i] = queue(t, p2, u, func(context.Context) (any, error) {
			n := now.Add(1)
			for m := peak.Load(); n > m && !peak.CompareAndSwap(m, n); m = peak.Load() {
			}
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
			now.Add(-1)
			return i, nil
		})
	}
	ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
	defer cancel()
	if _, err := event.Await(ctx, event.All(), tasks...); err != nil {
		t.Fatalf("Await all: %v", err)
	}
	if peak.Load() > 3 {
		t.Errorf("%d tasks ran at once on a pool of 3", peak.Load())
	}
	if len(order) != 30 {
		t.Errorf("%d tasks ran, want 30", len(order))
	}
	stop()
	uv.UvtShutdown(t, u, false)
}

// Close while queued: the function never runs. Close while running: the
// function's context is canceled, subscribers hear ErrClosed, the result
// is stored when it comes.
func TestTaskCloseWhileBusy(t *testing.T) {
	u := uv.UvtNewReactor(t)
	stop := uv.UvtServe(t, u)
	p := newPool(t, 1)
	started := make(chan struct{})
	running := queue(t, p, u, func(ctx context.Context) (any, error) {
		close(started)
		<-ctx.Done()
		return "stopped", ctx.Err()
	})
	var ran atomic.Bool
	queued := queue(t, p, u, func(context.Context) (any, error) { ran.Store(true); return nil, nil })
	calls := uv.UvtSubscribe(t, running, u.Owner().Owned)
	<-started
	uv.UvtMust(t, queued.Close())
	uv.UvtMust(t, running.Close())
	if c := calls.Next(t); !errors.Is(c.Err, event.ErrClosed) {
		t.Errorf("notification %+v, want ErrClosed", c)
	}
	uv.UvtWaitFor(t, "the stored result", func() bool { return running.Replay(event.NewCallback(func(event.Event, any, error) {})) == nil })
	if res, err := replayed(t, running); res != "stopped" || !errors.Is(err, context.Canceled) {
		t.Errorf("stored outcome %v, %v; want stopped, context.Canceled", res, err)
	}
	uv.UvtWaitFor(t, "the pool to empty", func() bool { return p.Queued() == 0 })
	if ran.Load() {
		t.Error("the task closed while queued ran")
	}
	stop()
	uv.UvtShutdown(t, u, false)
}

// Bad input: clear errors, the reactor keeps working.
func TestTaskBadInput(t *testing.T) {
	u := uv.UvtNewReactor(t)
	if _, err := uv.NewTaskPool(0); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("NewTaskPool(0) = %v, want EINVAL", err)
	}
	if _, err := uv.QueueTask[any](u.Reactor, nil); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("nil function: %v, want EINVAL", err)
	}
	if _, err := uv.QueueTask(nil, func(context.Context) (any, error) { return nil, nil }); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("nil reactor: %v, want EINVAL", err)
	}
	var nilPool *uv.TaskPool
	for name, p := range map[string]*uv.TaskPool{"nil": nilPool, "zero": {}} {
		task, err := uv.QueueTaskIn(p, u.Reactor, func(context.Context) (any, error) { return nil, nil })
		if !errors.Is(err, syscall.EINVAL) || task != nil {
			t.Errorf("Queue on a %s TaskPool = %v, %v; want nil, EINVAL", name, task, err)
		}
	}
	task, err := uv.QueueTask(u.Reactor, func(context.Context) (any, error) { return 1, nil })
	uv.UvtMust(t, err)
	uv.UvtMust(t, u.Run(context.Background()))
	if res, _ := replayed(t, task); res != 1 {
		t.Errorf("a good task after bad input: %v", res)
	}
	uv.UvtShutdown(t, u, false)
}

// Tasks dropped without Close under GOGC=10 leave no goroutine behind.
func TestTaskDropWithoutClose(t *testing.T) {
	uv.UvtDropWithoutClose(t, 1000, func(u *uv.UvtReactor, i int) error {
		_, err := uv.QueueTask(u.Reactor, func(context.Context) (any, error) { return i, nil })
		return err
	})
}

// BenchmarkTask: empty tasks through a pool of 4 workers, each completion
// delivered on the loop: the cost of the hand-off both ways.
func BenchmarkTask(b *testing.B) {
	u := uv.UvtNewReactor(b)
	p := newPool(b, 4)
	var done atomic.Int64
	cb := event.NewCallback(func(event.Event, any, error) { done.Add(1) })
	fn := func(context.Context) (any, error) { return nil, nil }
	b.ReportAllocs()
	b.ResetTimer()
	uv.UvtMust(b, u.Call(func() {
		for range b.N {
			task, err := uv.QueueTaskIn(p, u.Reactor, fn)
			if err != nil {
				b.Fatal(err)
			}
			task.AddCallback(cb)
		}
	}))
	uv.UvtMust(b, u.Run(context.Background()))
	b.StopTimer()
	if done.Load() != int64(b.N) {
		b.Fatalf("%d of %d tasks completed", done.Load(), b.N)
	}
	uv.UvtShutdown(b, u, false)
}
