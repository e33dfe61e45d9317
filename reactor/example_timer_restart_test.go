package reactor_test

import (
	"context"
	"fmt"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
)

// A debounce: one one-shot timer, refreshed on every change, saves once
// the changes pause; the same timer serves the next burst (a fired
// one-shot timer is stopped, not closed, and starts again).
func ExampleTimer_Refresh() {
	r, err := reactor.New(reactor.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Close()

	quiet, _ := r.NewTimer(20*time.Millisecond, 0)
	pending := 0
	event.Subscribe(quiet, func(ev event.Event, _ any, err error) {
		if err == nil { // not the close notification
			fmt.Printf("save %d changes (%v)\n", pending, event.StateOf(ev))
			pending = 0
		}
	})
	change := func() {
		pending++
		quiet.Refresh() // starts it, or pushes it back
	}

	for range 3 {
		change()
	}
	r.Run(context.Background()) // until the save: nothing else is active
	change()
	r.Run(context.Background())
	fmt.Println(quiet.Info(), event.StateOf(quiet))
	// Output:
	// save 3 changes (fired)
	// save 1 changes (fired)
	// Timer(timeout=20ms) stopped
}
