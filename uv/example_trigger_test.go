package uv_test

import (
	"context"
	"fmt"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// A trigger wakes the loop from another goroutine; its callbacks run on the
// loop goroutine. Close it when done: libuv frees its handle on the next
// loop turn.
func ExampleNewTrigger() {
	r, err := reactor.New(reactor.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Close()

	tr, err := uv.NewTrigger(r)
	if err != nil {
		fmt.Println(err)
		return
	}
	event.Subscribe(tr, func(ev event.Event, _ any, err error) {
		fmt.Printf("notified: on loop=%v err=%v\n", r.Owner().Owned(), err)
	})
	tr.Start()

	// RunOnce waits until something happens; bound the wait.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	sent := make(chan error)
	go func() { sent <- tr.Send() }() // any goroutine may send
	fmt.Println("send:", <-sent)

	if err := r.RunOnce(ctx); err != nil { // the loop turns and the trigger fires
		fmt.Println(err)
	}
	fmt.Println(tr.Info())

	tr.Close() // subscribers hear ErrClosed
	fmt.Println("send after close:", tr.Send())
	if err := r.RunOnce(ctx); err != nil { // libuv's close callback frees the handle
		fmt.Println(err)
	}
	fmt.Println("C handles:", r.Stats().CHandles)

	// Output:
	// send: <nil>
	// notified: on loop=true err=<nil>
	// Trigger(sent=1, fired=1)
	// notified: on loop=true err=event: closed
	// send after close: event: closed
	// C handles: 0
}
