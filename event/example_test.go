package event_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/eventkind"
)

func ExampleAwait() {
	var loop event.Serial // an Owner for events outside any reactor
	price := event.NewFuture[int](&loop)
	stock := event.NewFuture[int](&loop)

	go stock.Reject(errors.New("warehouse offline"))
	go price.Resolve(42)

	// Outcomes come by position, whatever order the events completed in.
	// IgnoreErrors: an error does not end the wait; it is kept in its outcome.
	outs, err := event.Await(context.Background(), event.All().IgnoreErrors(), price, stock)
	for _, o := range outs {
		fmt.Printf("event %d: result=%v err=%v\n", o.Index, o.Result, o.Err)
	}
	fmt.Println("wait error:", err)
	// Output:
	// event 0: result=42 err=<nil>
	// event 1: result=<nil> err=warehouse offline
	// wait error: <nil>
}

func ExampleAwaitAll() {
	var loop event.Serial
	a, b := event.NewFuture[string](&loop), event.NewFuture[string](&loop)
	go b.Resolve("second")
	go a.Resolve("first")
	vs, err := event.AwaitAll(context.Background(), a, b)
	fmt.Println(vs, err)
	// Output:
	// [first second] <nil>
}

func ExampleAwaitFirst() {
	var loop event.Serial
	mirrors := []event.Typed[string]{event.NewFuture[string](&loop), event.NewFuture[string](&loop)}
	mirrors[0].(*event.Future[string]).Reject(errors.New("mirror 0 down"))
	go mirrors[1].(*event.Future[string]).Resolve("payload from mirror 1")
	winner, v, err := event.AwaitFirst(context.Background(), mirrors...)
	fmt.Println(winner, v, err)
	// Output:
	// 1 payload from mirror 1 <nil>
}

func ExampleFuture_Await() {
	var loop event.Serial
	f := event.NewFuture[int](&loop)
	go f.Resolve(7)
	v, err := f.Await(context.Background())
	fmt.Println(v*6, err)
	// Output:
	// 42 <nil>
}

func ExampleFuture() {
	var loop event.Serial
	f := event.NewFuture[any](&loop)
	fmt.Println(f.Info())
	f.Resolve("ready")
	fmt.Println(f.Info())
	fmt.Println(f.Resolve("again"))

	// A late waiter gets the stored outcome at once.
	outs, _ := event.Await(context.Background(), event.Any(), f)
	fmt.Println(outs[0].Result)
	// Output:
	// Future(pending)
	// Future(completed)
	// event: future already completed
	// ready
}

func ExampleSubscribe() {
	var loop event.Serial
	f := event.NewFuture[any](&loop)
	cb, err := event.Subscribe(f, func(ev event.Event, result any, err error) {
		fmt.Printf("%s: %v, %v\n", ev.Info(), result, err)
	})
	if err != nil {
		panic(err)
	}
	fmt.Println("subscribers:", eventkind.Subscribers(f))
	f.Resolve("hello")
	// The future is one-shot: completing it released its subscribers.
	fmt.Println("subscribers:", eventkind.Subscribers(f), "callback refs:", cb.Refs())
	// Output:
	// subscribers: 1
	// Future(completed): hello, <nil>
	// subscribers: 0 callback refs: 0
}
