package reactor_test

import (
	"context"
	"fmt"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
)

// A one-shot timer: it is stopped when it fires, before its callbacks run,
// and Run returns once nothing is left to wait for; Start starts it again
// (as time.Timer's Reset does), until Close.
func ExampleReactor_NewTimer() {
	r, err := reactor.New(reactor.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Close()

	t, err := r.NewTimer(10*time.Millisecond, 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	event.Subscribe(t, func(ev event.Event, _ any, err error) {
		fmt.Printf("%s fired (err=%v, %v)\n", ev.Info(), err, event.StateOf(ev))
	})
	t.Start()
	if err := r.Run(context.Background()); err != nil {
		fmt.Println(err)
	}
	fmt.Println(event.StateOf(t), "start again:", t.Start()) // as time.Timer's Reset
	r.Run(context.Background())
	t.Close()
	fmt.Println(event.StateOf(t), "start again:", t.Start())
	// Output:
	// Timer(timeout=10ms) fired (err=<nil>, fired)
	// stopped start again: <nil>
	// Timer(timeout=10ms) fired (err=<nil>, fired)
	// Timer(timeout=10ms) fired (err=event: closed, closed)
	// closed start again: event: closed
}

// A periodic timer ticks until a callback stops it; a stopped timer no
// longer keeps Run going.
func ExampleReactor_NewTimer_periodic() {
	r, err := reactor.New(reactor.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Close()

	t, err := r.NewTimer(5*time.Millisecond, 5*time.Millisecond)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer t.Close()
	ticks := 0
	event.Subscribe(t, func(ev event.Event, _ any, err error) {
		if err != nil {
			return // event.ErrClosed, told by the deferred Close
		}
		ticks++
		fmt.Println("tick", ticks)
		if ticks == 3 {
			ev.Stop()
		}
	})
	fmt.Println(t.Info())
	t.Start()
	if err := r.Run(context.Background()); err != nil {
		fmt.Println(err)
	}
	fmt.Println(event.StateOf(t))
	// Output:
	// Timer(timeout=5ms, periodic)
	// tick 1
	// tick 2
	// tick 3
	// stopped
}

// Reset changes a started timer's deadline, counting from now: here a is
// pushed back by an hour, then brought forward again from b's callback.
func ExampleTimer_Reset() {
	r, err := reactor.New(reactor.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Close()

	a, _ := r.NewTimer(10*time.Millisecond, 0)
	b, _ := r.NewTimer(30*time.Millisecond, 0)
	event.Subscribe(a, func(ev event.Event, _ any, _ error) { fmt.Println("a fired:", ev.Info()) })
	event.Subscribe(b, func(ev event.Event, _ any, _ error) {
		fmt.Println("b fired:", ev.Info())
		a.Reset(5 * time.Millisecond) // a now fires 5ms after b
	})
	a.Start()
	b.Start()
	a.Reset(time.Hour) // a would have fired first; now it waits an hour
	if err := r.Run(context.Background()); err != nil {
		fmt.Println(err)
	}
	// Output:
	// b fired: Timer(timeout=30ms)
	// a fired: Timer(timeout=5ms)
}
