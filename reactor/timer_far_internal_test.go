package reactor

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/uvevent/uvevent/event"
)

// jumpClock moves the loop's clock d forward (its epoch back). On the loop.
func jumpClock(r *Reactor, d time.Duration) { r.epoch = r.epoch.Add(-d) }

// A repeating timer whose timeout and period lie beyond 2³¹ and 2³² ms
// (the wheel keeps 32 bits of a near timer's due; a far one waits in the
// heap with its whole due) fires on its schedule, each firing due exactly
// a period (in whole ms) after the one before, as the clock jumps there;
// DueIn counts down to the whole due, and Timeout and Repeat give back the
// durations to the nanosecond.
func TestTimerFarRepeatingSchedule(t *testing.T) {
	year := 365 * 24 * time.Hour
	for _, c := range []struct{ timeout, repeat time.Duration }{
		{1<<31*time.Millisecond + 3*time.Millisecond + 1, 1<<31*time.Millisecond + 7},
		{1<<32*time.Millisecond + 5500*time.Microsecond, 1<<32*time.Millisecond + 300*time.Microsecond},
		{3*year + 1, 2*year + 999},
		{time.Millisecond, 1<<32*time.Millisecond - 1}, // from the wheel to the heap and back
	} {
		r := timerTestReactor(t, Options{})
		type firing struct{ Due, Next int64 }
		var got, want []firing
		var first int64
		tm := timerTestNew(t, r, c.timeout, c.repeat, nil)
		event.Subscribe(tm, func(_ event.Event, _ any, err error) {
			if err != nil { // the Close at the end
				return
			}
			due := r.timers.dueOf(tm)
			if in := tm.DueIn(); in <= 0 || in > c.repeat+time.Millisecond {
				t.Errorf("%v/%v: DueIn after firing %d = %v, want in (0, %v]", c.timeout, c.repeat, len(got)+1, in, c.repeat+time.Millisecond)
			}
			got = append(got, firing{Due: due - ms(c.repeat), Next: due})
			if len(got) == 4 {
				tm.Stop()
				return
			}
			jumpClock(r, c.repeat+time.Millisecond) // late by under a period: no firing coalesced
		})
		timerTestStart(t, tm)
		r.Call(func() {
			first = r.timers.dueOf(tm)
			if in := tm.DueIn(); in <= c.timeout-time.Second || in > c.timeout+time.Millisecond {
				t.Errorf("%v/%v: DueIn after Start = %v", c.timeout, c.repeat, in)
			}
			jumpClock(r, c.timeout+time.Millisecond)
		})
		timerTestRun(t, r)
		for n := range int64(4) {
			due := first + n*ms(c.repeat)
			want = append(want, firing{Due: due, Next: due + ms(c.repeat)})
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%v/%v: firings (-want +got):\n%s", c.timeout, c.repeat, diff)
		}
		if tm.Timeout() != c.timeout || tm.Repeat() != c.repeat {
			t.Errorf("Timeout, Repeat = %v, %v; want %v, %v", tm.Timeout(), tm.Repeat(), c.timeout, c.repeat)
		}
		tm.Close()
	}
}

// A one-shot timer shares its reactor's conf; SetRepeat on it, started,
// makes it repeat from its next firing with a conf of its own, which it
// keeps when SetRepeat(0) makes it one-shot again: it then fires once
// more (the firing already scheduled) and stops. Repeat gives back each
// duration to the nanosecond.
func TestTimerSetRepeatOnStartedOneShot(t *testing.T) {
	r := timerTestReactor(t, Options{})
	fired := 0
	var tm *Timer
	tm = timerTestNew(t, r, 2*time.Millisecond, 0, func(event.Event, any, error) {
		if fired++; fired == 3 {
			if err := tm.SetRepeat(0); err != nil {
				t.Error(err)
			}
		}
	})
	if tm.conf() != &r.oneShot {
		t.Fatal("a one-shot timer does not share the reactor's conf")
	}
	timerTestStart(t, tm)
	const rep = 3*time.Millisecond + 7
	if err := tm.SetRepeat(rep); err != nil {
		t.Fatal(err)
	}
	if tm.conf() == &r.oneShot || tm.Repeat() != rep || r.oneShot.repeat != 0 {
		t.Fatalf("after SetRepeat(%v): own conf %v, Repeat %v, the reactor's %v", rep, tm.conf() != &r.oneShot, tm.Repeat(), r.oneShot.repeat)
	}
	timerTestRun(t, r)
	if fired != 4 || event.StateOf(tm) != event.Stopped || tm.Repeat() != 0 || r.oneShot.repeat != 0 {
		t.Errorf("fired %d times, %v, Repeat %v, the reactor's %v; want 4, stopped, 0, 0", fired, event.StateOf(tm), tm.Repeat(), r.oneShot.repeat)
	}
	tm.Close()
}

// A one-shot timer is one allocation of 80 bytes; a repeating one is one
// allocation too, the timer and its conf together (96 bytes).
func TestTimerAllocations(t *testing.T) {
	r := timerTestReactor(t, Options{})
	for _, repeat := range []time.Duration{0, time.Second} {
		if n := testing.AllocsPerRun(100, func() {
			if _, err := r.NewTimer(time.Second, repeat); err != nil {
				t.Fatal(err)
			}
		}); n != 1 {
			t.Errorf("NewTimer(1s, %v) allocates %v times, want 1", repeat, n)
		}
	}
	tm, _ := r.NewTimer(time.Second, time.Second)
	if tm.conf().r != r || tm.conf().repeat != time.Second {
		t.Errorf("a repeating timer's conf = %+v", *tm.conf())
	}
}

// SetRepeat that gives a one-shot timer a conf of its own does so on the
// loop, while other goroutines call the timer's methods, which find its
// reactor through that conf: the pointer is read and written atomically
// (a race the race detector saw when it was a plain pointer).
func TestTimerSetRepeatRacesGetters(t *testing.T) {
	r := timerTestReactor(t, Options{})
	ctx, stop := context.WithCancel(timerTestCtx(t))
	served := make(chan error, 1)
	go func() { served <- r.Serve(ctx) }()
	var wg sync.WaitGroup
	for range 20 {
		tm, err := r.NewTimer(time.Hour, 0)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(2)
		go func() {
			defer wg.Done()
			tm.SetRepeat(time.Second)
			tm.SetRepeat(0)
		}()
		go func() {
			defer wg.Done()
			_, _, _ = tm.Timeout(), tm.Repeat(), tm.DueIn()
		}()
	}
	wg.Wait()
	stop()
	<-served
}
