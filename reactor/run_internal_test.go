package reactor

// What a libuv user looks for on a loop, from the cases of libuv 1.44's
// test-ref.c that apply to this API; the timer's cases are in
// timer_internal_test.go.

import (
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/uvevent/uvevent/event"
)

func TestNowAndUpdateTime(t *testing.T) {
	r := timerTestReactor(t, Options{})
	var first, cached, fresh time.Duration
	r.Call(func() {
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
// goroutine driving the loop; Call says so, and the reactor stays usable.
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
	if err := r.Call(func() { runtime.Goexit() }); !errors.Is(err, ErrGoexit) {
		t.Fatalf("Call of a Goexit = %v, want ErrGoexit", err)
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
			r.activeDelta(1)
			r.activeDelta(-1)
		}
	}()
	<-done
	if got := r.Stats().Active; got != 0 {
		t.Fatalf("Active = %d after balanced deltas, want 0", got)
	}
	r.Stop()
	<-stop
}
