package uv_test

import (
	"context"
	"fmt"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// A check hook runs after each iteration's wait for I/O (on the pure-Go
// driver, at the same place in its iteration); here it stops itself after
// its first run, and Run returns once nothing is active.
func ExampleNewCheck() {
	r, _ := reactor.New(reactor.Options{})
	defer r.Close()
	check, _ := uv.NewCheck(r)
	defer check.Close()
	runs := 0
	event.Subscribe(check, func(ev event.Event, _ any, _ error) {
		if runs++; runs == 1 {
			ev.Stop() // one look after libuv's first poll is enough here
		}
	})
	check.Start()
	r.Run(context.Background())
	fmt.Println("check ran", runs, "time(s)")
	// Output: check ran 1 time(s)
}
