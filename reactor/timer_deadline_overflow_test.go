package reactor_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
)

// overflowSweep are timeouts just under the largest Duration, half a
// millisecond apart over a second: whatever the reactor's age (under a
// second), one of them puts the deadline within the last millisecond of
// the clock's range, where rounding it up to the next millisecond used to
// wrap negative and fire the timer at once.
func overflowSweep() []time.Duration {
	var ds []time.Duration
	for x := time.Duration(0); x < time.Second; x += 500 * time.Microsecond {
		ds = append(ds, math.MaxInt64-x)
	}
	return ds
}

// Timers of about 292 years never fire (libuv clamps such a deadline), and
// their DueIn says "far away", not 0; whether started, reset, or restarted
// with Again.
func TestTimerDeadlineOverflowNeverFires(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		r, err := reactor.New(reactor.Options{Driver: d, OnReport: func(event.Event, string, error) {}})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		fired := 0
		count := func(_ event.Event, _ any, err error) {
			if err == nil {
				fired++
			}
		}
		var timers []*reactor.Timer
		for _, dur := range overflowSweep() {
			start, _ := r.NewTimer(dur, 0)
			reset, _ := r.NewTimer(time.Hour, 0)
			again, _ := r.NewTimer(time.Hour, dur)
			for _, tm := range []*reactor.Timer{start, reset, again} {
				event.Subscribe(tm, count)
				if err := tm.Start(); err != nil {
					t.Fatal(err)
				}
				timers = append(timers, tm)
			}
			if err := reset.Reset(dur); err != nil {
				t.Fatal(err)
			}
			if err := again.Again(); err != nil {
				t.Fatal(err)
			}
		}
		for range 3 {
			if err := r.RunNoWait(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		if fired != 0 {
			t.Errorf("%d of %d timers of about 292 years fired at once", fired, len(timers))
		}
		for _, tm := range timers {
			if due := tm.DueIn(); due < 100*365*24*time.Hour {
				t.Fatalf("DueIn of %v = %v, want centuries", tm.Timeout(), due)
			}
		}
	})
}
