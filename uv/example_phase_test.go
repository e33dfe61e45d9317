//go:build cgo

package uv_test

import (
	"context"
	"fmt"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// The loop-phase hooks need the libuv driver (this file builds with cgo).
func ExampleNewCheck() {
	r, _ := reactor.New(reactor.Options{})
	defer r.Close()
	check, _ := uv.NewCheck(r)
	defer check.Close()
	tm, _ := uv.NewTimer(r, time.Millisecond, 0)
	_ = tm
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
