package uv_test

import (
	"context"
	"fmt"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// A Task runs blocking work off the loop; its result comes back on the
// loop goroutine. A task that has not started can be taken back.
func ExampleTaskPool_Queue() {
	r, err := reactor.New(reactor.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Close()

	pool, _ := uv.NewTaskPool(1)
	gate := make(chan struct{})
	first, _ := pool.Queue(r, func(context.Context) (any, error) {
		<-gate // blocking work
		return "first done", nil
	})
	second, _ := pool.Queue(r, func(context.Context) (any, error) { return "never", nil })
	for _, t := range []*uv.Task{first, second} {
		event.Subscribe(t, func(_ event.Event, res any, err error) { fmt.Println(res, err) })
	}
	fmt.Println("cancel second:", second.Cancel())
	close(gate)
	if err := r.Run(context.Background()); err != nil {
		fmt.Println(err)
	}

	// Output:
	// <nil> uv: task canceled before it started: context canceled
	// cancel second: <nil>
	// first done <nil>
}
