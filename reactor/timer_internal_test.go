package reactor

// What a libuv user looks for on a timer, from the cases of libuv 1.44's
// test-timer.c and test-timer-again.c that apply to this API.

import (
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/uvevent/uvevent/event"
)

func TestTimerGetters(t *testing.T) {
	r := timerTestReactor(t, Options{})
	tm := timerTestNew(t, r, 50*time.Millisecond, 20*time.Millisecond, nil)
	if tm.Timeout() != 50*time.Millisecond || tm.Repeat() != 20*time.Millisecond {
		t.Fatalf("Timeout, Repeat = %v, %v; want 50ms, 20ms", tm.Timeout(), tm.Repeat())
	}
	if d := tm.DueIn(); d != 0 {
		t.Fatalf("DueIn of a timer not started = %v, want 0", d)
	}
	timerTestStart(t, tm)
	if d := tm.DueIn(); d <= 0 || d > 51*time.Millisecond {
		t.Fatalf("DueIn just after a 50 ms Start = %v, want in (0, 51ms]", d)
	}
	tm.Close()
}

// timer_again: Again on a timer never started or not repeating is EINVAL;
// on a repeating timer it reschedules with the repeat value, started or not.
func TestTimerAgain(t *testing.T) {
	r := timerTestReactor(t, Options{})
	oneShot := timerTestNew(t, r, time.Hour, 0, nil)
	if err := oneShot.Again(); !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("Again on a timer never started = %v, want EINVAL", err)
	}
	timerTestStart(t, oneShot)
	if err := oneShot.Again(); !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("Again on a one-shot timer = %v, want EINVAL", err)
	}
	oneShot.Close()
	if err := oneShot.Again(); !errors.Is(err, event.ErrClosed) {
		t.Fatalf("Again on a closed timer = %v, want ErrClosed", err)
	}

	fired := 0
	rep := timerTestNew(t, r, time.Hour, 5*time.Millisecond, func(ev event.Event, _ any, _ error) {
		if fired++; fired == 3 {
			ev.Stop()
		}
	})
	timerTestStart(t, rep)
	if err := rep.Again(); err != nil {
		t.Fatal(err)
	}
	if d := rep.DueIn(); d > 6*time.Millisecond { // the 5 ms repeat, rounded up to the clock's next millisecond
		t.Fatalf("DueIn after Again = %v, want ≤ 6 ms (the repeat, not the hour timeout)", d)
	}
	timerTestRun(t, r)
	if fired != 3 {
		t.Fatalf("fired %d times, want 3", fired)
	}
	// Stopped: Again starts it again with the repeat value.
	if err := rep.Again(); err != nil {
		t.Fatal(err)
	}
	if got := event.StateOf(rep); got != event.Active {
		t.Fatalf("after Again on a stopped timer: %v, want active", got)
	}
	rep.Close()
}
