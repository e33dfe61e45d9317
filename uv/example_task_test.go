package uv_test

import (
	"context"
	"fmt"

	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// A Task runs blocking work off the loop; its result, typed, comes back on
// the loop goroutine. A task that has not started can be taken back.
func ExampleQueueTaskIn() {
	r, err := reactor.New(reactor.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Close()

	pool, _ := uv.NewTaskPool(1)
	gate := make(chan struct{})
	first, _ := uv.QueueTaskIn(pool, r, func(context.Context) (string, error) {
		<-gate // blocking work
		return "first done", nil
	})
	second, _ := uv.QueueTaskIn(pool, r, func(context.Context) (string, error) { return "never", nil })
	for _, t := range []*uv.Task[string]{first, second} {
		t.OnDone(func(res string, err error) { fmt.Printf("%q %v\n", res, err) })
	}
	fmt.Println("cancel second:", second.Cancel())
	close(gate)
	if err := r.Run(context.Background()); err != nil {
		fmt.Println(err)
	}

	// Output:
	// "" uv: task canceled before it started: context canceled
	// cancel second: <nil>
	// "first done" <nil>
}
