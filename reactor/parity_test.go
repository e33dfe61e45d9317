package reactor

// libuv parity: what a libuv user looks for on a timer and a loop (ported
// from the cases of libuv 1.44's test-timer.c, test-timer-again.c and
// test-ref.c that apply to this API).

import (
	"errors"
	"github.com/google/go-cmp/cmp"
	"runtime"
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

func TestNowAndUpdateTime(t *testing.T) {
	r := timerTestReactor(t, Options{})
	var first, cached, fresh time.Duration
	r.Exec(func() {
		first = r.Now()
		time.Sleep(5 * time.Millisecond)
		cached = r.Now()
		r.UpdateTime()
		fresh = r.Now()
	})
	if cached != first {
		t.Fatalf("Now within one operation moved from %v to %v without UpdateTime", first, cached)
	}
	if fresh-first < 5*time.Millisecond {
		t.Fatalf("UpdateTime after 5 ms: Now moved by %v", fresh-first)
	}
}

func TestRunNoWaitAndAlive(t *testing.T) {
	r := timerTestReactor(t, Options{})
	if r.Alive() {
		t.Fatal("a new reactor is alive")
	}
	fired := false
	tm := timerTestNew(t, r, time.Hour, 0, func(event.Event, any, error) { fired = true })
	timerTestStart(t, tm)
	if !r.Alive() {
		t.Fatal("a reactor with a started timer is not alive")
	}
	if err := r.RunNoWait(timerTestCtx(t)); err != nil || fired {
		t.Fatalf("RunNoWait = %v, fired = %v: it must not wait for the hour", err, fired)
	}
	tm.Close()
	if r.Alive() {
		t.Fatal("alive after its only event closed")
	}
}

// runtime.Goexit in a queued operation (what t.Fatal does) ends the
// goroutine driving the loop; Exec says so, and the reactor stays usable.
func TestGoexitDoesNotWedgeTheReactor(t *testing.T) {
	var reports []string
	r := timerTestReactor(t, Options{OnReport: func(_ event.Event, msg string, _ error) { reports = append(reports, msg) }})
	served := make(chan struct{})
	go func() {
		defer close(served)
		r.Serve(timerTestCtx(t))
	}()
	for !r.Stats().Running {
		time.Sleep(100 * time.Microsecond)
	}
	if err := r.Exec(func() { runtime.Goexit() }); !errors.Is(err, ErrGoexit) {
		t.Fatalf("Exec of a Goexit = %v, want ErrGoexit", err)
	}
	<-served // the loop goroutine ended
	fired := false
	tm := timerTestNew(t, r, time.Millisecond, 0, func(event.Event, any, error) { fired = true })
	timerTestStart(t, tm)
	timerTestRun(t, r)
	if !fired {
		t.Fatal("a timer did not fire on the reactor after the Goexit")
	}
	// A Post that panics while no loop runs is reported, not raised.
	if err := r.Post(func() { panic("boom") }); err != nil {
		t.Fatal(err)
	}
	want := []string{"operation called runtime.Goexit", "posted operation panicked"}
	if diff := cmp.Diff(want, reports); diff != "" {
		t.Fatalf("reports (-want +got):\n%s", diff)
	}
}

// ActiveDelta from a goroutine that does not own the loop is posted to it,
// never applied unguarded (the race detector would see that).
func TestActiveDeltaOffTheLoopIsPosted(t *testing.T) {
	r := timerTestReactor(t, Options{})
	stop := make(chan struct{})
	go func() {
		defer close(stop)
		r.Serve(timerTestCtx(t))
	}()
	for !r.Stats().Running {
		time.Sleep(100 * time.Microsecond)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 100 {
			r.ActiveDelta(1)
			r.ActiveDelta(-1)
		}
	}()
	<-done
	if got := r.Stats().Active; got != 0 {
		t.Fatalf("Active = %d after balanced deltas, want 0", got)
	}
	r.Stop()
	<-stop
}
