package uv_test

// The loop contract every kind relies on (docs/architecture.md §2), proven
// through real libuv state: a libuv timer and a thread-pool request built
// with the kind kit (testkind_test.go).

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// libuv's next timeout is an absolute deadline: work posted from another
// goroutine every few milliseconds wakes the parked loop again and again,
// and the libuv timer still fires when due.
func TestLibuvDeadlineSurvivesWakeUps(t *testing.T) {
	uv.UvtNeedsLibuv(t)
	u := uv.UvtNewReactor(t)
	tm, err := uv.UvtNewLibuvTimer(u.Reactor, 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	var fired atomic.Bool
	event.Subscribe(tm, func(event.Event, any, error) { fired.Store(true) })
	if err := tm.Start(); err != nil {
		t.Fatal(err)
	}
	stop := uv.UvtServe(t, u)
	posts := 0
	for !fired.Load() {
		if posts++; posts > 250 { // 5 s of posts for a 100 ms timer
			t.Fatalf("libuv timer of 100 ms not fired after %d posts 20 ms apart", posts)
		}
		u.Post(func() {})
		time.Sleep(20 * time.Millisecond)
	}
	stop()
	tm.Close()
	uv.UvtShutdown(t, u, false)
}

// A libuv timer started after the loop was parked a while counts its
// timeout from the start: the shim refreshes libuv's clock first.
func TestLibuvTimerCountsFromStart(t *testing.T) {
	uv.UvtNeedsLibuv(t)
	u := uv.UvtNewReactor(t)
	tm, err := uv.UvtNewLibuvTimer(u.Reactor, 20*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan time.Time, 1)
	event.Subscribe(tm, func(event.Event, any, error) { done <- time.Now() })
	stop := uv.UvtServe(t, u)
	time.Sleep(50 * time.Millisecond) // the loop parks; libuv's clock is not read
	start := time.Now()
	if err := tm.Start(); err != nil {
		t.Fatal(err)
	}
	// libuv's clock is CLOCK_MONOTONIC_COARSE here when that ticks every
	// millisecond: allow its one tick, no more.
	if got := uv.UvtRecv(t, done, "the libuv timer").Sub(start); got < 19*time.Millisecond {
		t.Fatalf("a 20 ms libuv timer fired %v after Start", got)
	}
	stop()
	tm.Close()
	uv.UvtShutdown(t, u, false)
}

// Reactor timers never fire before their timeout has passed since Start on
// the monotonic clock, whether started from a callback after long work or
// from another goroutine while the loop parks.
func TestTimersNeverEarly(t *testing.T) {
	u := uv.UvtNewReactor(t)
	stop := uv.UvtServe(t, u)
	const n = 2000
	type span struct{ start, fired time.Time }
	spans := make([]span, n)
	timeouts := make([]time.Duration, n)
	var left atomic.Int64
	left.Store(n)
	all := make(chan struct{})
	for i := range n {
		timeouts[i] = time.Duration(rand.Int64N(int64(20 * time.Millisecond)))
		tm, err := u.Reactor.NewTimer(timeouts[i], 0)
		if err != nil {
			t.Fatal(err)
		}
		event.Subscribe(tm, func(event.Event, any, error) {
			spans[i].fired = time.Now()
			if left.Add(-1) == 0 {
				close(all)
			}
		})
		u.Call(func() {
			if i%100 == 0 {
				busy(2 * time.Millisecond) // the turn's cached clock goes stale
			}
			spans[i].start = time.Now()
			tm.Start()
		})
	}
	uv.UvtRecv(t, all, "every timer")
	stop()
	early := 0
	for i, s := range spans {
		if s.fired.Sub(s.start) < timeouts[i] {
			early++
		}
	}
	if early > 0 {
		t.Fatalf("%d of %d timers fired before their timeout", early, n)
	}
	uv.UvtShutdown(t, u, false)
}

func busy(d time.Duration) {
	for start := time.Now(); time.Since(start) < d; {
	}
}

// A request in flight keeps Run going, is no deadlock, and completes with
// its result.
func TestRequestKeepsRunAlive(t *testing.T) {
	uv.UvtNeedsLibuv(t)
	u := uv.UvtNewReactor(t)
	w, err := uv.UvtSubmitWork(u.Reactor, 30*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	var got any
	event.Subscribe(w, func(_ event.Event, res any, err error) { got = res })
	co, err := reactor.Spawn(context.Background(), u.Reactor, func(ctx context.Context) (any, error) {
		_, err := event.Await(ctx, event.Any(), w)
		return nil, err
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := u.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got != "done" {
		t.Fatalf("request result = %v, want done (Run returned before it completed)", got)
	}
	if _, _, err := co.Outcome(); err != nil {
		t.Fatalf("coroutine awaiting a request in flight: %v", err)
	}
	uv.UvtShutdown(t, u, false)
}

// Close waits, without spinning, for requests in flight; those not started
// are cancelled; every subscriber hears ErrClosed; nothing is left.
func TestCloseWaitsForRequests(t *testing.T) {
	uv.UvtNeedsLibuv(t)
	u := uv.UvtNewReactor(t)
	var errs [6]error
	for i := range errs {
		w, err := uv.UvtSubmitWork(u.Reactor, 20*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		event.Subscribe(w, func(_ event.Event, _ any, err error) { errs[i] = err })
	}
	before := u.Stats().Iterations
	if err := u.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	for i, err := range errs {
		if !errors.Is(err, event.ErrClosed) {
			t.Errorf("request %d: %v, want ErrClosed", i, err)
		}
	}
	if s := u.Stats(); s.CHandles != 0 || s.Iterations-before > 10 {
		t.Fatalf("after Close: %+v (iterations since: %d)", s, s.Iterations-before)
	}
}

// Close ends whatever callbacks do: a callback that answers ErrClosed by
// starting a new timer or creating a trigger is refused.
func TestCloseRefusesNewWorkFromCallbacks(t *testing.T) {
	u := uv.UvtNewReactor(t)
	var timerErr, triggerErr, startErr error
	tm, _ := u.Reactor.NewTimer(time.Hour, 0)
	event.Subscribe(tm, func(event.Event, any, error) {
		next, err := u.Reactor.NewTimer(time.Millisecond, 0)
		timerErr = err
		if next != nil {
			startErr = next.Start()
		}
		_, triggerErr = uv.NewTrigger(u.Reactor)
	})
	tm.Start()
	tr, _ := uv.NewTrigger(u.Reactor)
	event.Subscribe(tr, func(event.Event, any, error) { startErr = errors.Join(startErr, tm.Start()) })
	tr.Start()
	if err := u.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	for name, err := range map[string]error{"NewTimer": timerErr, "NewTrigger": triggerErr} {
		if !errors.Is(err, reactor.ErrReactorClosed) {
			t.Errorf("%s during Close = %v, want ErrReactorClosed", name, err)
		}
	}
	if startErr != nil && !errors.Is(startErr, reactor.ErrReactorClosed) && !errors.Is(startErr, event.ErrClosed) {
		t.Errorf("Start during Close = %v", startErr)
	}
	if s := u.Stats(); s.CHandles != 0 || s.Timers != 0 {
		t.Fatalf("left after Close: %+v", s)
	}
}

// Close from another goroutine while Serve runs stops the loop, waits for
// it and closes: graceful shutdown in one call.
func TestCloseWhileServing(t *testing.T) {
	u := uv.UvtNewReactor(t)
	tr, _ := uv.NewTrigger(u.Reactor)
	tr.Start()
	served := make(chan error, 1)
	go func() { served <- u.Serve(context.Background()) }()
	uv.UvtWaitFor(t, "the loop to run", func() bool { return u.Stats().Running })
	if err := u.Close(); err != nil {
		t.Fatalf("Close while serving: %v", err)
	}
	if err := uv.UvtRecv(t, served, "Serve to return"); err != nil {
		t.Fatalf("Serve returned %v, want nil", err)
	}
	if err := tr.Send(); !errors.Is(err, event.ErrClosed) {
		t.Fatalf("Send after Close = %v, want ErrClosed", err)
	}
}

// Shutdown's context bounds the wait for a run that does not stop; the
// reactor stays open for a later Close.
func TestShutdownContextBoundsTheWait(t *testing.T) {
	u := uv.UvtNewReactor(t)
	release, entered := make(chan struct{}), make(chan struct{})
	tr, _ := uv.NewTrigger(u.Reactor)
	event.Subscribe(tr, func(_ event.Event, _ any, err error) {
		if err == nil {
			close(entered)
			<-release
		}
	})
	tr.Start()
	stop := uv.UvtServe(t, u)
	tr.Send()
	uv.UvtRecv(t, entered, "the callback to block")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := u.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Shutdown with a stuck callback = %v, want DeadlineExceeded", err)
	}
	close(release)
	stop()
	tr.Close()
	uv.UvtShutdown(t, u, false)
}

// A Stop ends exactly one run; a run on a reactor whose only events are
// hidden returns without firing them.
func TestStopEndsOneRunAndHiddenRunsNothing(t *testing.T) {
	u := uv.UvtNewReactor(t)
	u.Stop()
	if err := u.RunOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	fired := false
	tm, _ := u.Reactor.NewTimer(time.Millisecond, 0)
	event.Subscribe(tm, func(event.Event, any, error) { fired = true })
	tm.Start()
	if err := u.Run(context.Background()); err != nil || !fired {
		t.Fatalf("Run after a spent Stop = %v, fired = %v; want the timer fired", err, fired)
	}
	hidden, _ := u.Reactor.NewTimer(0, 0)
	hidden.SetHidden(true)
	hiddenFired := false
	event.Subscribe(hidden, func(event.Event, any, error) { hiddenFired = true })
	hidden.Start()
	if err := u.Run(context.Background()); err != nil || hiddenFired {
		t.Fatalf("Run with only a hidden timer = %v, fired = %v; want it not run", err, hiddenFired)
	}
	hidden.Close()
	uv.UvtShutdown(t, u, false)
}
