package reactor_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
)

func TestCallDirectWhenNotRunning(t *testing.T) {
	r, _ := newReactor(t)
	if r.Owner().Owned() {
		t.Fatal("Owned outside any operation")
	}
	ran := false
	if err := r.Call(func() {
		ran = true
		if !r.Owner().Owned() {
			t.Error("inside Call the caller must own the loop")
		}
		// Nested operations run at once, without deadlocking.
		r.Call(func() {})
		r.Post(func() {})
	}); err != nil {
		t.Fatal(err)
	}
	if !ran {
		t.Fatal("Call did not run fn")
	}
	if got := r.Stats().Queued; got != 0 {
		t.Fatalf("Queued = %d, want 0 while the loop does not run", got)
	}
}

func TestCallQueuedWhileRunning(t *testing.T) {
	r, _ := newReactor(t)
	stop := serve(t, r)
	defer stop()
	var order []int
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.Call(func() {
				if !r.Owner().Owned() {
					t.Error("a queued operation must run with ownership")
				}
				order = append(order, i) // loop-owned: no lock needed
			})
		}()
	}
	wg.Wait()
	if len(order) != 50 {
		t.Fatalf("%d operations ran, want 50", len(order))
	}
	if got := r.Stats().Queued; got < 50 {
		t.Fatalf("Queued = %d, want ≥ 50", got)
	}
}

func TestCallRaisesPanicInCaller(t *testing.T) {
	r, _ := newReactor(t)
	stop := serve(t, r)
	defer stop()
	func() {
		defer func() {
			if p := recover(); p != "boom" {
				t.Fatalf("recovered %v, want boom", p)
			}
		}()
		r.Call(func() { panic("boom") })
	}()
	// The loop survived.
	ok := false
	r.Call(func() { ok = true })
	if !ok {
		t.Fatal("the loop stopped after a panicking operation")
	}
}

func TestPostPanicIsReported(t *testing.T) {
	r, rep := newReactor(t)
	stop := serve(t, r)
	r.Post(func() { panic("posted boom") })
	r.Call(func() {})
	stop()
	msgs, errs := rep.snapshot()
	if diff := cmp.Diff([]string{"posted operation panicked"}, msgs); diff != "" {
		t.Fatalf("reports (-want +got):\n%s", diff)
	}
	var pe *event.PanicError
	if !errors.As(errs[0], &pe) || pe.Value != "posted boom" {
		t.Fatalf("report error = %v, want a PanicError with the value", errs[0])
	}
}

func TestRunStateErrors(t *testing.T) {
	r, _ := newReactor(t)
	stop := serve(t, r)
	if err := r.Run(context.Background()); !errors.Is(err, reactor.ErrRunning) {
		t.Fatalf("Run while serving = %v, want ErrRunning", err)
	}
	var inner error
	r.Call(func() { inner = r.RunOnce(context.Background()) })
	if !errors.Is(inner, reactor.ErrRunning) {
		t.Fatalf("RunOnce from the loop = %v, want ErrRunning", inner)
	}
	stop()
}

func TestClosedReactorRefusesWork(t *testing.T) {
	r, err := reactor.New(reactor.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatalf("second Close = %v, want nil", err)
	}
	for name, err := range map[string]error{
		"Call": r.Call(func() {}),
		"Post": r.Post(func() {}),
		"Run":  r.Run(context.Background()),
	} {
		if !errors.Is(err, reactor.ErrReactorClosed) {
			t.Errorf("%s on a closed reactor = %v, want ErrReactorClosed", name, err)
		}
	}
	if _, err := r.NewTimer(0, 0); !errors.Is(err, reactor.ErrReactorClosed) {
		t.Fatalf("NewTimer on a closed reactor = %v, want ErrReactorClosed", err)
	}
}

func TestStopAndRunOnce(t *testing.T) {
	r, _ := newReactor(t)
	ctx := runCtx(t)
	tm, _ := r.NewTimer(0, 1) // periodic: Run would never end by itself
	fired := 0
	event.Subscribe(tm, func(ev event.Event, _ any, _ error) {
		if fired++; fired == 3 {
			r.Stop()
		}
	})
	tm.Start()
	if err := r.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if fired != 3 {
		t.Fatalf("fired %d times before Stop took effect, want 3", fired)
	}
	before := fired
	if err := r.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if fired != before+1 {
		t.Fatalf("RunOnce fired %d times, want 1", fired-before)
	}
	tm.Close()
}

func TestRunReturnsContextError(t *testing.T) {
	r, _ := newReactor(t)
	tm, _ := r.NewTimer(1<<40, 0)
	tm.Start()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := r.Run(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v, want context.Canceled", err)
	}
	tm.Close()
}

// Several reactors run at once, each on its own goroutine.
func TestReactorsRunConcurrently(t *testing.T) {
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := reactor.New(reactor.Options{})
			if err != nil {
				t.Error(err)
				return
			}
			defer r.Close()
			n := 0
			for range 100 {
				tm, _ := r.NewTimer(0, 0)
				event.Subscribe(tm, func(event.Event, any, error) { n++ })
				tm.Start()
			}
			if err := r.Run(context.Background()); err != nil {
				t.Error(err)
			}
			if n != 100 {
				t.Errorf("fired %d of 100", n)
			}
		}()
	}
	wg.Wait()
}

func TestHoldKeepsRunGoing(t *testing.T) {
	r, _ := newReactor(t)
	release, err := r.Hold()
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Stats().Active; got != 1 {
		t.Fatalf("Active with a hold = %d, want 1", got)
	}
	f := event.NewFuture[any](r)
	go func() {
		f.Resolve("late")
		release()
		release() // twice is harmless
	}()
	if err := r.Run(runCtx(t)); err != nil {
		t.Fatal(err)
	}
	if !f.Done() {
		t.Fatal("Run returned before the held work was done")
	}
	if got := r.Stats().Active; got != 0 {
		t.Fatalf("Active after release = %d, want 0", got)
	}
}

// A cooperative coroutine holding its reactor's baton is that loop's owner
// for the deadlock guard too: a coroutine of a calling Call on b while a
// coroutine of b calls Call on a would wait for each other's loop for ever.
// Both are refused with ErrOnLoop. The deadline only turns a hang into a
// failure.
func TestCallBetweenCoroutinesOfTwoReactors(t *testing.T) {
	rs := make([]*reactor.Reactor, 2)
	stops := make([]func(), 2)
	for i := range rs {
		r, err := reactor.New(reactor.Options{})
		if err != nil {
			t.Fatal(err)
		}
		rs[i] = r
		stops[i] = serve(t, r)
	}
	got := make(chan error, 2)
	holding := []chan struct{}{make(chan struct{}), make(chan struct{})}
	for i, r := range rs {
		other := rs[1-i]
		_, err := reactor.Spawn(context.Background(), r, func(context.Context) (int, error) {
			close(holding[i]) // this coroutine holds r's baton until it returns
			<-holding[1-i]
			err := other.Call(func() {})
			got <- err
			return 0, err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.After(20 * time.Second)
	for range rs {
		select {
		case err := <-got:
			if !errors.Is(err, event.ErrOnLoop) {
				t.Errorf("Call on the other reactor from a coroutine = %v, want ErrOnLoop", err)
			}
		case <-deadline:
			t.Fatal("the two coroutines deadlocked in Call (the reactors are left running)")
		}
	}
	for i, r := range rs {
		stops[i]()
		if err := r.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if s := r.Stats(); s.Coroutines != 0 || s.Timers != 0 {
			t.Errorf("left alive after Close: %+v", s)
		}
	}
}
