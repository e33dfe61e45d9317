package reactor

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/uvevent/uvevent/event"
)

// A Shutdown whose context ends while another Close waits for the loop to
// stop must not reopen the reactor: it resets closing, the waiting Close
// then closes with constructors accepted, and a timer callback that answers
// ErrClosed by starting a timer keeps closeAll's rounds going for ever
// (architecture §2 rule 7: Close terminates whatever callbacks do).
func TestExpiredShutdownDoesNotReopenAWaitingClose(t *testing.T) {
	r, err := New(Options{OnReport: func(event.Event, string, error) {}})
	if err != nil {
		t.Fatal(err)
	}
	var respawn func(_ event.Event, _ any, err error)
	respawn = func(_ event.Event, _ any, err error) {
		if !errors.Is(err, event.ErrClosed) {
			return
		}
		tm, err := r.NewTimer(time.Hour, 0)
		if err != nil {
			return // refused: what a closing reactor must do
		}
		event.Subscribe(tm, respawn)
		tm.Start()
	}
	tm, err := r.NewTimer(time.Hour, 0)
	if err != nil {
		t.Fatal(err)
	}
	event.Subscribe(tm, respawn)
	if err := tm.Start(); err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- r.Serve(context.Background()) }()
	for !r.Stats().Running {
		runtime.Gosched()
	}
	unblock := make(chan struct{})
	r.Post(func() { <-unblock }) // the loop is busy in an operation
	closed := make(chan error, 1)
	go func() { closed <- r.Close() }()
	for !r.closing.Load() {
		runtime.Gosched()
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := r.Shutdown(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Shutdown with an ended context = %v, want context.Canceled", err)
	}
	if !r.closing.Load() {
		t.Errorf("a Close is under way, yet the expired Shutdown cleared closing: constructors accept again")
	}
	close(unblock)
	<-served
	select {
	case err := <-closed:
		if err != nil {
			t.Fatalf("Close: %v", err)
		}
	case <-time.After(10 * time.Second): // safety bound: Close is due at once
		t.Fatal("Close never returned: closeAll re-closes the timers its close notifications start")
	}
}
