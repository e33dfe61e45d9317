package uv_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// A trigger whose callback sends to the same trigger: libuv delivers such a
// send on a later turn (uv_async_send inside the callback wakes the next
// iteration), so RunOnce returns and timers keep firing. On both drivers a
// turn must end, ctx must be honoured, and a timer must fire while the
// trigger re-sends itself forever.
func TestTriggerSelfSendEndsTheTurn(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		r := uv.UvtNewReactorOn(t, d).Reactor
		defer r.Close()
		tr, err := uv.NewTrigger(r)
		if err != nil {
			t.Fatal(err)
		}
		var fired atomic.Int64
		sendAgain := atomic.Bool{}
		sendAgain.Store(true)
		// The event a callback is given has no Send (it is the target, not
		// the *Trigger): a callback that re-sends must use the reference.
		event.Subscribe(tr, func(ev event.Event, _ any, err error) {
			if err == nil && sendAgain.Load() {
				fired.Add(1)
				if err := tr.Send(); err != nil {
					t.Errorf("Send from the callback: %v", err)
				}
			}
		})
		tr.Start()
		tr.Send()
		done := make(chan error, 1)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			done <- r.RunOnce(ctx)
		}()
		select {
		case <-done:
			if fired.Load() == 0 {
				t.Fatalf("the trigger never fired")
			}
		case <-time.After(raceSafety):
			sendAgain.Store(false)
			t.Fatalf("RunOnce did not return within %v: a self-sending trigger keeps one turn going (%d notifications)", raceSafety, fired.Load())
		}
		// Fairness under Run: a timer due in 1 ms fires while the trigger
		// keeps re-sending.
		tm, err := r.NewTimer(time.Millisecond, 0)
		if err != nil {
			t.Fatal(err)
		}
		timerFired := make(chan struct{})
		event.Subscribe(tm, func(_ event.Event, _ any, err error) {
			if err == nil {
				close(timerFired)
				r.Stop()
			}
		})
		tm.Start()
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), raceSafety)
			defer cancel()
			done <- r.Run(ctx)
		}()
		select {
		case <-timerFired:
		case <-time.After(raceSafety):
			t.Errorf("a 1 ms timer never fired while a trigger re-sent itself (%d notifications)", fired.Load())
		}
		sendAgain.Store(false)
		select {
		case <-done:
		case <-time.After(raceSafety):
			t.Fatalf("Run never returned")
		}
		if err := closeBounded(t, r); err != nil {
			t.Fatal(err)
		}
	})
}
