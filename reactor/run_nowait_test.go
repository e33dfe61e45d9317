package reactor_test

import (
	"context"
	"errors"
	"testing"

	"github.com/uvevent/uvevent/reactor"
)

// RunNoWait with a context already done runs nothing and returns the
// context's error, as Run and RunOnce do; with a live one it runs what is
// due and returns nil.
func TestRunNoWaitHonoursADoneContext(t *testing.T) {
	forEachDriver(t, func(t *testing.T, r *reactor.Reactor) {
		ran := 0
		now, err := r.NewTimer(0, 0) // due at the next turn
		if err != nil {
			t.Fatal(err)
		}
		now.OnFire(func(error) { ran++ })
		if err := now.Start(); err != nil {
			t.Fatal(err)
		}
		done, cancel := context.WithCancel(context.Background())
		cancel()
		if err := r.RunNoWait(done); !errors.Is(err, context.Canceled) || ran != 0 {
			t.Errorf("RunNoWait(cancelled) = %v with the timer due fired %d times; want context.Canceled and no firing", err, ran)
		}
		if err := r.RunNoWait(context.Background()); err != nil || ran != 1 {
			t.Errorf("RunNoWait = %v with the timer due fired %d times; want nil and one firing", err, ran)
		}
	})
}
