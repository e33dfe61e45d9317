package uv_test

import (
	"context"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/uv"
)

// A poll whose descriptor stays readable (level-triggered: its callback
// never drains it) is delivered on every turn, and still cannot hold the
// loop from its timers and from work queued by other goroutines: on the
// pure-Go driver the loop then runs the poller's pass itself turn after
// turn, one pass per turn.
func TestPollAlwaysReadableLeavesRoomForTimersAndExec(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		r := u.Reactor
		p, err := eventfdPoll(r)
		if err != nil {
			t.Fatal(err)
		}
		if err := fireEventfd(p); err != nil {
			t.Fatal(err)
		}
		passes := 0
		if _, err := event.Subscribe(p, func(event.Event, any, error) { passes++ }); err != nil {
			t.Fatal(err)
		}
		if err := p.Start(); err != nil {
			t.Fatal(err)
		}
		tm, err := r.NewTimer(time.Millisecond, 0)
		if err != nil {
			t.Fatal(err)
		}
		fired := make(chan struct{})
		if _, err := event.Subscribe(tm, func(_ event.Event, _ any, err error) {
			if err == nil { // not the close's notification
				close(fired)
			}
		}); err != nil {
			t.Fatal(err)
		}
		if err := tm.Start(); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		served := make(chan error, 1)
		go func() { served <- r.Serve(ctx) }()
		<-fired // hangs (the test's timeout) if the poll starves the timer
		var seen int
		if err := r.Call(func() { seen = passes }); err != nil {
			t.Fatal(err)
		}
		if seen == 0 {
			t.Errorf("the readable poll was not delivered before the timer fired")
		}
		// The poll goes on being delivered while Calls keep coming: each
		// Call is answered, and the count of passes it reads grows.
		var before int
		r.Call(func() { before = passes })
		uv.UvtWaitFor(t, "the readable poll delivered again between Calls", func() bool {
			var now int
			if err := r.Call(func() { now = passes }); err != nil {
				t.Fatal(err)
			}
			return now > before
		})
		cancel()
		if err := <-served; err != nil && err != context.Canceled {
			t.Errorf("Serve = %v", err)
		}
		var buf [8]byte
		unix.Read(p.FD(), buf[:])
		p.Close()
		tm.Close()
		uv.UvtShutdown(t, u, false)
	})
}
