package reactor_test

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
)

// Futures with subscribers are completed from other goroutines while the
// reactor closes: each subscriber is told exactly once, either the outcome
// or an error matching ErrReactorClosed, and completing a future whose
// reactor is closing races with nothing the Close does to it (-race).
func TestFutureCompletedDuringClose(t *testing.T) {
	const futures = 500
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		r, err := reactor.New(reactor.Options{Driver: d, OnReport: func(event.Event, string, error) {}})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		served := make(chan error, 1)
		go func() { served <- r.Serve(context.Background()) }()
		waitFor(t, "the loop to run", func() bool { return r.Stats().Running })

		fs := make([]*event.Future[int], futures)
		told := make([]atomic.Int32, futures)
		var mu sync.Mutex
		var wrong []error
		failure := errors.New("failed on purpose")
		for i := range fs {
			fs[i] = event.NewFuture[int](r.Owner())
			if _, err := event.Subscribe(fs[i], func(_ event.Event, _ any, err error) {
				told[i].Add(1)
				if err != nil && !errors.Is(err, failure) && !errors.Is(err, reactor.ErrReactorClosed) {
					mu.Lock()
					wrong = append(wrong, err)
					mu.Unlock()
				}
			}); err != nil {
				t.Fatal(err)
			}
		}
		start := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(2)
		go func() {
			defer wg.Done()
			<-start
			// Complete them once the Close has begun: a future made now is
			// refused.
			for !event.NewFuture[int](r.Owner()).Done() {
				runtime.Gosched()
			}
			for i, f := range fs {
				if i%2 == 0 {
					f.Resolve(i)
				} else {
					f.Reject(failure)
				}
			}
		}()
		go func() {
			defer wg.Done()
			<-start
			if err := r.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		}()
		close(start)
		wg.Wait()
		<-served
		for i := range told {
			if n := told[i].Load(); n != 1 {
				t.Errorf("future %d: its subscriber was told %d times, want once", i, n)
			}
		}
		for _, err := range wrong {
			t.Errorf("a subscriber heard %v, want the outcome or ErrReactorClosed", err)
		}
	})
}
