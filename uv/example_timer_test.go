package uv_test

import (
	"context"
	"fmt"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// A periodic timer ticks until a callback stops it; a stopped timer no
// longer keeps Run going.
func ExampleNewTimer() {
	r, err := reactor.New(reactor.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Close()

	t, err := uv.NewTimer(r, 5*time.Millisecond, 5*time.Millisecond)
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
