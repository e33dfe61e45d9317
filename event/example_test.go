package event_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/uvevent/uvevent/event"
)

func ExampleAwait() {
	var loop event.Serial // an Owner for events outside any reactor
	price := event.NewFuture(&loop)
	stock := event.NewFuture(&loop)

	go price.Resolve(42)
	go stock.Reject(errors.New("warehouse offline"))

	outs, err := event.Await(context.Background(), event.All(), price, stock)
	// Outcomes come in the order the events completed; print them by place.
	byIndex := make([]event.Outcome, len(outs))
	for _, o := range outs {
		byIndex[o.Index] = o
	}
	for _, o := range byIndex {
		fmt.Printf("event %d: result=%v err=%v\n", o.Index, o.Result, o.Err)
	}
	fmt.Println("wait error:", err)
	// Output:
	// event 0: result=42 err=<nil>
	// event 1: result=<nil> err=warehouse offline
	// wait error: warehouse offline
}

func ExampleFuture() {
	var loop event.Serial
	f := event.NewFuture(&loop)
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
	// future already completed
	// ready
}

func ExampleSubscribe() {
	var loop event.Serial
	f := event.NewFuture(&loop)
	cb, err := event.Subscribe(f, func(ev event.Event, result any, err error) {
		fmt.Printf("%s: %v, %v\n", ev.Info(), result, err)
	})
	if err != nil {
		panic(err)
	}
	fmt.Println("subscribers:", event.Subscribers(f))
	f.Resolve("hello")
	// The future is one-shot: completing it released its subscribers.
	fmt.Println("subscribers:", event.Subscribers(f), "callback refs:", cb.Refs())
	// Output:
	// subscribers: 1
	// Future(completed): hello, <nil>
	// subscribers: 0 callback refs: 0
}
