package event_test

import (
	"context"
	"fmt"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
)

// Two coroutines hand a value back and forth through two handoffs: one
// event for each direction, however many turns the exchange takes.
func ExampleHandoff() {
	r, _ := reactor.New(reactor.Options{})
	defer r.Close()
	ctx := context.Background()
	ping, _ := event.NewHandoff[int](r)
	pong, _ := event.NewHandoff[int](r)
	reactor.Spawn(ctx, r, func(ctx context.Context) (int, error) {
		v := 1
		for range 3 {
			ping.Resolve(v) // kept until the other coroutine waits for it
			var err error
			if v, err = pong.Await(ctx); err != nil {
				return 0, err
			}
			fmt.Println("back:", v)
		}
		return v, nil
	})
	reactor.Spawn(ctx, r, func(ctx context.Context) (int, error) {
		for range 3 {
			v, err := ping.Await(ctx)
			if err != nil {
				return 0, err
			}
			pong.Resolve(v * 10)
		}
		return 0, nil
	})
	r.Run(ctx)
	fmt.Println(ping.Info())
	// Output:
	// back: 10
	// back: 100
	// back: 1000
	// Handoff(empty)
}
