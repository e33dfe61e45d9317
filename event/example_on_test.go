package event_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/uvevent/uvevent/event"
)

func ExampleOn() {
	var loop event.Serial
	price := event.NewFuture[int](&loop)
	// fn gets an int: no type assertion. A close would be left out.
	event.On(price, func(v int, err error) { fmt.Println("price:", v, err) })
	price.Resolve(42)
	// Output:
	// price: 42 <nil>
}

func ExampleAwaitAllSettled() {
	var loop event.Serial
	lookups := []*event.Future[string]{
		event.NewFuture[string](&loop), event.NewFuture[string](&loop),
	}
	go lookups[1].Reject(errors.New("no such host"))
	go lookups[0].Resolve("10.0.0.1")
	vs, errs, err := event.AwaitAllSettled(context.Background(), lookups...)
	for i := range vs {
		fmt.Printf("%d: %q %v\n", i, vs[i], errs[i])
	}
	fmt.Println("wait:", err)
	// Output:
	// 0: "10.0.0.1" <nil>
	// 1: "" no such host
	// wait: <nil>
}

// AwaitValue waits for one typed event from a goroutine that is not the
// loop's and gives its value as a T.
func ExampleAwaitValue() {
	var loop event.Serial
	answer := event.NewFuture[int](&loop)
	go answer.Resolve(42)
	v, err := event.AwaitValue(context.Background(), answer)
	fmt.Println(v, err)
	// Output: 42 <nil>
}

// With WithClose, On also delivers the notification a Close sends, as
// event.ErrClosed: a callback that must always run (to release what it
// holds) asks for it.
func ExampleWithClose() {
	var loop event.Serial
	job := event.NewFuture[string](&loop)
	event.On(job, func(v string, err error) { fmt.Println("plain:", v, err) })
	event.On(job, func(v string, err error) {
		fmt.Println("with close:", errors.Is(err, event.ErrClosed))
	}, event.WithClose)
	job.Close()
	// Output: with close: true
}
