package reactor

// What a libuv user looks for on a timer, from the cases of libuv 1.44's
// test-timer.c and test-timer-again.c that apply to this API.

import (
	"errors"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/google/go-cmp/cmp"

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

// A periodic timer keeps its schedule (next due = previous due + period),
// counted against the loop clock rather than timed: a loop that fires
// each deadline up to 2 ms late fires a 10 ms timer 300 times in 3 s, as
// time.Ticker ticks, where re-arming from the moment it fired drifted to
// fewer; a loop late by more than a period coalesces the missed deadlines
// into one firing and goes on with the schedule; no firing is early.
func TestTimerPeriodicKeepsSchedule(t *testing.T) {
	tm := &Timer{}
	tm.c.Store(&timerConf{repeat: 10 * time.Millisecond})
	late := []int64{0, 1, 2, 1, 0, 2, 2, 1}
	fired, early := 0, 0
	for i, due := 0, int64(10); due <= 3000; i++ {
		now := due + late[i%len(late)]
		fired++
		next := tm.nextDue(due, now)
		if next < due+10 {
			early++
		}
		due = next
	}
	if fired != 300 || early != 0 {
		t.Errorf("10 ms timer over 3 s, up to 2 ms late: %d firings, %d early; want 300, 0", fired, early)
	}
	type step struct{ Due, Now, Next int64 }
	var got []step
	for _, s := range []step{
		{Due: 100, Now: 100}, // on time
		{Due: 100, Now: 109}, // late, within the period
		{Due: 100, Now: 110}, // the next deadline is now: due at once, not dropped
		{Due: 100, Now: 125}, // 110 and 120 passed: coalesced, on to 130
		{Due: 100, Now: 130},
	} {
		s.Next = tm.nextDue(s.Due, s.Now)
		got = append(got, s)
	}
	want := []step{{100, 100, 110}, {100, 109, 110}, {100, 110, 110}, {100, 125, 130}, {100, 130, 130}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("next deadlines (-want +got):\n%s", diff)
	}
	tm.conf().repeat = time.Hour
	if next := tm.nextDue(maxDue-5, maxDue-5); next != maxDue {
		t.Errorf("a deadline past the wheel's last millisecond = %d, want it clamped to %d", next, int64(maxDue))
	}
}

// A Timer is in the allocator's 80-byte size class: workload T1 arms a
// million of them (docs/benchmarks.md), where each byte is a megabyte of
// peak RSS and of memory cleared and scanned. At 81 bytes it would take the
// 96-byte class. The wheel holds a timer's place in its queue (loc), not
// links through the timers, and only the low 32 bits of its due (the heap
// keeps the whole due and the start sequence of its timers); a timer that
// does not repeat shares its reactor's conf (reactor and repeat 0); the
// event's Base keeps its one subscriber inline in two words.
func TestTimerSizeClass(t *testing.T) {
	if size := unsafe.Sizeof(Timer{}); size != 80 {
		t.Errorf("Timer is %d bytes, want 80", size)
	}
}
