package reactor_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
)

// The README's example: a periodic timer, a typed future it resolves, and
// a cooperative coroutine awaiting it.
func ExampleCoroutine() {
	ctx := context.Background()
	r, _ := reactor.New(reactor.Options{})
	defer r.Close()

	tick, _ := r.NewTimer(10*time.Millisecond, 10*time.Millisecond) // periodic
	f := event.NewFuture[string](r)
	n := 0
	event.Subscribe(tick, func(ev event.Event, _ any, _ error) {
		if n++; n == 3 {
			ev.Stop()
			f.Resolve("three ticks")
		}
	})
	tick.Start()

	co, _ := reactor.Spawn(ctx, r, func(ctx context.Context) (string, error) {
		return f.Await(ctx) // gives the loop back while it waits
	})
	_ = r.Run(ctx)            // until no active event and no coroutine remains
	fmt.Println(co.Outcome()) // three ticks true <nil>
	// Output: three ticks true <nil>
}

// Two coroutines awaiting each other are reported, not left hanging.
func ExampleDeadlockError() {
	ctx := context.Background()
	r, _ := reactor.New(reactor.Options{OnReport: func(event.Event, string, error) {}})
	defer r.Close()
	fa, fb := event.NewFuture[any](r), event.NewFuture[any](r)
	a, _ := reactor.Go(ctx, r, func(ctx context.Context) (any, error) {
		_, err := event.Await(ctx, event.Any(), fb)
		return nil, err
	})
	reactor.Go(ctx, r, func(ctx context.Context) (any, error) {
		_, err := event.Await(ctx, event.Any(), fa)
		return nil, err
	})
	_ = r.Run(ctx)
	_, _, err := a.Outcome()
	var dl *reactor.DeadlockError
	fmt.Println(errors.Is(err, event.ErrDeadlock), errors.As(err, &dl), len(dl.Waiters))
	fmt.Println(dl.Waiters[0].Coroutine, dl.Waiters[0].Events)
	// Output:
	// true true 2
	// Goroutine 1 spawned at reactor/example_test.go:45, waiting at reactor/example_test.go:46 on Future(pending) [Future(pending)]
}

// Go runs blocking work in parallel with the loop; its result is an event
// like any other.
func ExampleGo() {
	ctx := context.Background()
	r, _ := reactor.New(reactor.Options{})
	defer r.Close()
	sum, _ := reactor.Go(ctx, r, func(ctx context.Context) (int, error) {
		time.Sleep(time.Millisecond) // blocking is fine here, not in a callback or Spawn
		return 1 + 2 + 3, nil
	})
	_ = r.Run(ctx)
	fmt.Println(sum.Await(ctx))
	// Output: 6 <nil>
}
