package reactor_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
)

// A coroutine spawned on the loop whose error nobody takes is reported at
// the end of the turn it failed in; one whose error is awaited is not,
// nor one its own context cancelled.
func ExampleSpawn_unhandledError() {
	r, _ := reactor.New(reactor.Options{OnReport: func(_ event.Event, msg string, err error) {
		var ue *event.UnhandledError
		if errors.As(err, &ue) {
			fmt.Println(msg+":", ue.Err)
		}
	}})
	defer r.Close()
	ctx := context.Background()
	reactor.Spawn(ctx, r, func(ctx context.Context) (int, error) {
		reactor.Spawn(ctx, r, func(context.Context) (int, error) { return 0, errors.New("lost") })
		awaited, _ := reactor.Spawn(ctx, r, func(context.Context) (int, error) { return 0, errors.New("seen") })
		_, err := awaited.Await(ctx)
		fmt.Println("awaited:", err)
		cancelled, _ := reactor.Spawn(ctx, r, func(ctx context.Context) (int, error) {
			return event.NewFuture[int](r).Await(ctx) // until cancelled
		})
		cancelled.Cancel()
		return 0, nil
	})
	r.Run(ctx)
	// The report comes at the end of the turn, after the rest of it ran.

	// Output:
	// awaited: seen
	// unhandled error: lost
}
