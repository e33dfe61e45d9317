package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
)

// tourDeadlock: two coroutines await each other's futures; nothing else can
// happen, so the reactor tells both, with a report of who waits on what.
func tourDeadlock(ctx context.Context, r *reactor.Reactor) error {
	say("two coroutines, each awaiting the other's future")
	fa, fb := event.NewFuture[any](r), event.NewFuture[any](r)
	a, _ := reactor.Go(ctx, r, func(ctx context.Context) (any, error) {
		_, err := event.Await(ctx, event.Any(), fb)
		fa.Reject(err)
		return nil, err
	})
	b, _ := reactor.Go(ctx, r, func(ctx context.Context) (any, error) {
		_, err := event.Await(ctx, event.Any(), fa)
		fb.Reject(err)
		return nil, err
	})
	if err := r.Run(ctx); err != nil {
		return err
	}
	_, _, errA := a.Outcome()
	_, _, errB := b.Outcome()
	var dl *reactor.DeadlockError
	if !errors.As(errA, &dl) || !errors.Is(errB, event.ErrDeadlock) {
		return fmt.Errorf("expected deadlock errors, got %v and %v", errA, errB)
	}
	say("each waiter got ErrDeadlock; the report lists %d waiters:", len(dl.Waiters))
	for _, w := range dl.Waiters {
		say("  %s", w.Coroutine)
	}
	return nil
}
