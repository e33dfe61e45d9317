package async_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/uvevent/uvevent/async"
	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
)

// A pool closed after its reactor still destroys its idle resources (a
// connection pool's Close, deferred after the reactor's Close or run once
// a Shutdown is over, closes its connections) and says nil, as any Close
// of the pool does; closing it again, from several goroutines at once,
// destroys nothing twice.
func TestPoolCloseAfterReactorClose(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		r, err := reactor.New(reactor.Options{Driver: d, OnReport: func(event.Event, string, error) {}})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		var mu sync.Mutex
		var destroyed []int
		next := 0
		p, err := async.NewPool(r, async.PoolOptions[int]{
			Max: 2,
			New: func(context.Context) (int, error) {
				mu.Lock()
				defer mu.Unlock()
				next++
				return next, nil
			},
			Destroy: func(v int) {
				mu.Lock()
				destroyed = append(destroyed, v)
				mu.Unlock()
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		served := make(chan struct{})
		go func() { defer close(served); r.Serve(ctx) }()
		a, err := p.Acquire().Await(ctx)
		if err != nil {
			t.Fatal(err)
		}
		b, err := p.Acquire().Await(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range []int{a, b} {
			if err := p.Release(v); err != nil {
				t.Fatal(err)
			}
		}
		cancel()
		<-served
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := p.Close(); err != nil {
					t.Errorf("the pool's Close after the reactor's: %v, want nil", err)
				}
			}()
		}
		wg.Wait()
		mu.Lock()
		got := slices.Sorted(slices.Values(destroyed))
		mu.Unlock()
		if diff := cmp.Diff([]int{1, 2}, got); diff != "" {
			t.Errorf("destroyed (-want +got):\n%s", diff)
		}
	})
}

// A resource released or discarded after the reactor's Close is destroyed
// (the pool is closed with its reactor) and nil is said, as for a pool
// closed by its own Close: a handler's deferred Release, whose error is
// rarely read, leaves no connection open when the reactor closes under it.
// A value the pool never lent is still refused.
func TestPoolReleaseAfterReactorClose(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		r, err := reactor.New(reactor.Options{Driver: d, OnReport: func(event.Event, string, error) {}})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		var mu sync.Mutex
		var destroyed []int
		next := 0
		p, err := async.NewPool(r, async.PoolOptions[int]{
			Max: 3,
			New: func(context.Context) (int, error) {
				mu.Lock()
				defer mu.Unlock()
				next++
				return next, nil
			},
			Destroy: func(v int) {
				mu.Lock()
				destroyed = append(destroyed, v)
				mu.Unlock()
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		served := make(chan struct{})
		go func() { defer close(served); r.Serve(ctx) }()
		var lent []int
		for range 3 {
			v, err := p.Acquire().Await(ctx)
			if err != nil {
				t.Fatal(err)
			}
			lent = append(lent, v)
		}
		if err := p.Release(lent[2]); err != nil {
			t.Fatal(err)
		}
		cancel()
		<-served
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		if err := p.Release(lent[0]); err != nil {
			t.Errorf("Release after the reactor's Close: %v, want nil", err)
		}
		if err := p.Discard(lent[1]); err != nil {
			t.Errorf("Discard after the reactor's Close: %v, want nil", err)
		}
		if err := p.Release(99); !errors.Is(err, async.ErrNotAcquired) {
			t.Errorf("Release of a value never lent, after the reactor's Close: %v, want ErrNotAcquired", err)
		}
		mu.Lock()
		got := slices.Sorted(slices.Values(destroyed))
		mu.Unlock()
		if diff := cmp.Diff([]int{1, 2, 3}, got); diff != "" {
			t.Errorf("destroyed (-want +got):\n%s", diff)
		}
	})
}
