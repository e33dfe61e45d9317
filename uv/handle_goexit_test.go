package uv_test

import (
	"context"
	"runtime"
	"testing"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/uv"
)

// Goexit in a callback ends the goroutine turning the loop in the middle of
// a turn's records (architecture §2 rule 9: it must not wedge the reactor).
// The records after it in that turn are never dispatched: the next turn
// releases them. Here the lost one is another trigger's close record, so
// its id stays in the reactor's table for good: Stats still counts a
// trigger after Close.
func TestGoexitInACallbackLosesTheRestOfTheTurn(t *testing.T) {
	u := uv.UvtNewReactor(t)
	a, err := uv.NewTrigger(u.Reactor)
	if err != nil {
		t.Fatal(err)
	}
	b, err := uv.NewTrigger(u.Reactor)
	if err != nil {
		t.Fatal(err)
	}
	event.Subscribe(a, func(_ event.Event, _ any, err error) {
		if err == nil {
			runtime.Goexit()
		}
	})
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	b.Close() // its close callback runs in the next libuv turn, after the async pass
	a.Send()  // reported in the same turn, before b's close record
	done := make(chan struct{})
	go func() {
		defer close(done)
		u.RunOnce(context.Background())
	}()
	<-done
	if err := u.Close(); err != nil {
		t.Fatal(err)
	}
	if s := u.Stats(); len(s.Handles) != 0 || s.CHandles != 0 {
		t.Fatalf("after Close: handles %v, C handles %d; want none", s.Handles, s.CHandles)
	}
}
