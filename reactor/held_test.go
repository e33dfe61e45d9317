package reactor_test

import (
	"context"
	"errors"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/eventkind"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
)

// A reactor holds a pending future only while someone is to be told of
// it: one whose waiter gave up, or which completed, is the collector's
// again once dropped, while its reactor lives on.
func TestHeldFutureLetGoWhenNobodyWaits(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		r, err := reactor.New(reactor.Options{Driver: d})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		stop := serve(t, r)
		defer stop()
		var collected atomic.Int32
		// A waiter that gives up (its context canceled) leaves the future.
		func() {
			f := event.NewFuture[int](r)
			runtime.AddCleanup(f, func(c *atomic.Int32) { c.Add(1) }, &collected)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { _, err := f.Await(ctx); done <- err }()
			waitFor(t, "the waiter to subscribe", func() bool { return eventkind.Subscribers(f) == 1 })
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Errorf("Await = %v, want context.Canceled", err)
			}
		}()
		// So does a subscriber that unsubscribes.
		func() {
			f := event.NewFuture[int](r)
			runtime.AddCleanup(f, func(c *atomic.Int32) { c.Add(1) }, &collected)
			cb, err := event.Subscribe(f, func(event.Event, any, error) {})
			if err != nil {
				t.Fatal(err)
			}
			if err := f.DelCallback(cb); err != nil {
				t.Fatal(err)
			}
		}()
		// A subscriber told of the completion leaves it too.
		func() {
			f := event.NewFuture[int](r)
			runtime.AddCleanup(f, func(c *atomic.Int32) { c.Add(1) }, &collected)
			heard := make(chan error, 1)
			if _, err := event.Subscribe(f, func(_ event.Event, _ any, err error) { heard <- err }); err != nil {
				t.Fatal(err)
			}
			if err := f.Resolve(1); err != nil {
				t.Fatal(err)
			}
			if err := <-heard; err != nil {
				t.Errorf("subscriber heard %v, want nil", err)
			}
		}()
		waitFor(t, "the three dropped futures to be collected", func() bool {
			runtime.GC()
			return collected.Load() == 3
		})
	})
}

// A future refused by a closing reactor says so everywhere: Outcome,
// Await, a subscriber and Resolve all give ErrReactorClosed, and it is
// closed.
func TestFutureOfClosedReactorRefused(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		r, err := reactor.New(reactor.Options{Driver: d})
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		f := event.NewFuture[int](r)
		if _, done, err := f.Outcome(); !done || !errors.Is(err, reactor.ErrReactorClosed) {
			t.Errorf("Outcome = done %t, %v; want done, ErrReactorClosed", done, err)
		}
		if _, err := f.Await(context.Background()); !errors.Is(err, reactor.ErrReactorClosed) {
			t.Errorf("Await = %v, want ErrReactorClosed", err)
		}
		if err := f.Resolve(1); !errors.Is(err, reactor.ErrReactorClosed) {
			t.Errorf("Resolve = %v, want ErrReactorClosed", err)
		}
		if _, err := event.Subscribe(f, func(event.Event, any, error) {}); err == nil {
			t.Error("Subscribe on a refused future = nil, want an error")
		}
		if !f.Flags().Has(event.Closed) {
			t.Error("a refused future is not closed")
		}
	})
}
