package uv_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/eventkind"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

var eqEvent = cmp.Comparer(func(a, b event.Event) bool { return a == b })

// A Send from another goroutine while Serve runs the loop notifies on the
// loop goroutine.
func TestTriggerSendFromGoroutineRunsCallbackOnLoop(t *testing.T) {
	u := uv.UvtNewReactor(t)
	tr := uv.UvtNewTrigger(t, u)
	calls := uv.UvtSubscribe(t, tr, u.Owner().Owned)
	uv.UvtMust(t, tr.Start())
	stop := uv.UvtServe(t, u)
	sendErr := make(chan error, 1)
	go func() { sendErr <- tr.Send() }()
	if err := uv.UvtRecv(t, sendErr, "Send result"); err != nil {
		t.Fatalf("Send: %v", err)
	}
	got := calls.Next(t)
	if !got.OnLoop {
		t.Error("callback did not run on the loop goroutine (r.Owner().Owned() = false)")
	}
	if u.Owner().Owned() {
		t.Error("the test goroutine owns the loop while Serve runs")
	}
	want := uv.UvtCall{Event: event.Deref(tr), OnLoop: true}
	if diff := cmp.Diff(want, got, eqEvent, cmpopts.EquateErrors()); diff != "" {
		t.Errorf("notification (-want +got):\n%s", diff)
	}
	stop()
	uv.UvtFinish(t, u, tr)
}

// Sends that all come before the loop turns coalesce: at least one and at
// most that many notifications.
func TestTriggerSendsCoalesce(t *testing.T) {
	u := uv.UvtNewReactor(t)
	tr := uv.UvtNewTrigger(t, u)
	calls := uv.UvtSubscribe(t, tr, u.Owner().Owned)
	uv.UvtMust(t, tr.Start())
	const senders, each = 4, 25
	var wg sync.WaitGroup
	for range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				if err := tr.Send(); err != nil {
					t.Errorf("Send: %v", err)
				}
			}
		}()
	}
	wg.Wait()
	uv.UvtFence(t, u) // every send returned before: all were seen
	n := calls.N()
	if n < 1 || n > senders*each {
		t.Fatalf("%d sends gave %d notifications, want 1..%d", senders*each, n, senders*each)
	}
	t.Logf("%d sends coalesced into %d notification(s)", senders*each, n)
	want := fmt.Sprintf("Trigger(sent=%d, fired=%d)", senders*each, n)
	if got := tr.Info(); got != want {
		t.Errorf("Info = %q, want %q", got, want)
	}
	for _, c := range calls.Calls() {
		if !c.OnLoop || c.Err != nil {
			t.Errorf("notification %+v: want on the loop, no error", c)
		}
	}
	uv.UvtFinish(t, u, tr)
}

// A Send to a trigger that is not started does not notify; Stop and Start
// again (restart) works.
func TestTriggerStoppedDropsSendsAndRestarts(t *testing.T) {
	u := uv.UvtNewReactor(t)
	tr := uv.UvtNewTrigger(t, u)
	calls := uv.UvtSubscribe(t, tr, u.Owner().Owned)

	// Never started.
	uv.UvtMust(t, tr.Send())
	uv.UvtFence(t, u)
	// Started, then stopped.
	uv.UvtMust(t, tr.Start())
	uv.UvtMust(t, tr.Stop())
	if got := event.StateOf(tr); got != event.Stopped {
		t.Errorf("state after Stop = %v, want stopped", got)
	}
	uv.UvtMust(t, tr.Send())
	uv.UvtFence(t, u)
	if n := calls.N(); n != 0 {
		t.Fatalf("a stopped trigger notified %d time(s)", n)
	}
	if sent, fired := uv.UvtInfoCounts(t, tr); fired != 0 || sent > 2 {
		t.Errorf("Info counts sent=%d fired=%d, want fired=0 and at most the 2 sends", sent, fired)
	}
	// Restart: it notifies again, and Start counts (two Starts need two Stops).
	uv.UvtMust(t, tr.Start())
	uv.UvtMust(t, tr.Start())
	if got := eventkind.LoopRefs(tr); got != 2 {
		t.Errorf("LoopRefs after two Starts = %d", got)
	}
	uv.UvtMust(t, tr.Send())
	uv.UvtTurnUntil(t, u, "a notification after restart", func() bool { return calls.N() == 1 })
	uv.UvtMust(t, tr.Stop())
	uv.UvtMust(t, tr.Send())
	uv.UvtTurnUntil(t, u, "a second notification (one Stop of two)", func() bool { return calls.N() == 2 })
	uv.UvtMust(t, tr.Stop())
	uv.UvtMust(t, tr.Stop()) // not started: a no-op
	uv.UvtMust(t, tr.Send())
	uv.UvtFence(t, u)
	if n := calls.N(); n != 2 {
		t.Errorf("after the last Stop: %d notifications, want 2", n)
	}
	// Sends while stopped may or may not count as sent; never as fired.
	if sent, fired := uv.UvtInfoCounts(t, tr); fired != 2 || sent < 2 || sent > 5 {
		t.Errorf("Info counts sent=%d fired=%d, want fired=2 and 2 ≤ sent ≤ 5", sent, fired)
	}
	uv.UvtFinish(t, u, tr)
}

// The doc says sends to a stopped trigger are dropped. A send made while
// the trigger is stopped must not be delivered because the trigger was
// started again before the loop turned.
func TestTriggerSendWhileStoppedNotDeliveredAfterRestart(t *testing.T) {
	u := uv.UvtNewReactor(t)
	tr := uv.UvtNewTrigger(t, u)
	calls := uv.UvtSubscribe(t, tr, u.Owner().Owned)
	uv.UvtMust(t, tr.Send()) // stopped (never started)
	uv.UvtMust(t, tr.Start())
	uv.UvtFence(t, u) // had the stale send been kept, it fired by now
	if n := calls.N(); n != 0 {
		t.Errorf("a send made while the trigger was stopped was delivered after Start (%d notification(s)); Info %s",
			n, tr.Info())
	}
	uv.UvtFinish(t, u, tr)
}

// Create, Start, Close, the close callback, and what a closed trigger does.
func TestTriggerLifecycle(t *testing.T) {
	uv.UvtNeedsLibuv(t)
	u := uv.UvtNewReactor(t)
	if diff := cmp.Diff(uv.UvtCounts{0, 0}, uv.UvtCountsOf(t, u)); diff != "" {
		t.Fatalf("fresh reactor (-want +got):\n%s", diff)
	}
	tr := uv.UvtNewTrigger(t, u)
	if diff := cmp.Diff(uv.UvtCounts{1, 1}, uv.UvtCountsOf(t, u)); diff != "" {
		t.Fatalf("after NewTrigger (-want +got):\n%s", diff)
	}
	if got := event.StateOf(tr); got != event.Created {
		t.Errorf("state = %v, want created", got)
	}
	if got, want := tr.Info(), "Trigger(sent=0, fired=0)"; got != want {
		t.Errorf("Info = %q, want %q", got, want)
	}
	calls := uv.UvtSubscribe(t, tr, u.Owner().Owned)
	uv.UvtMust(t, tr.Start())
	if got := u.Stats().Active; got != 1 {
		t.Errorf("Active with a started trigger = %d, want 1", got)
	}
	uv.UvtMust(t, tr.Close())
	want := []uv.UvtCall{{Event: event.Deref(tr), Err: event.ErrClosed, OnLoop: true}}
	if diff := cmp.Diff(want, calls.Calls(), eqEvent, cmpopts.EquateErrors()); diff != "" {
		t.Errorf("subscribers at Close (-want +got):\n%s", diff)
	}
	if !tr.Flags().Has(event.Closed) || event.StateOf(tr) != event.StateClosed {
		t.Errorf("after Close: flags %v, state %v", tr.Flags(), event.StateOf(tr))
	}
	if got := u.Stats().Active; got != 0 {
		t.Errorf("Active after Close = %d, want 0", got)
	}
	if err := tr.Send(); !errors.Is(err, event.ErrClosed) {
		t.Errorf("Send after Close = %v, want ErrClosed", err)
	}
	if err := tr.Start(); !errors.Is(err, event.ErrClosed) {
		t.Errorf("Start after Close = %v, want ErrClosed", err)
	}
	if err := tr.AddCallback(event.NewCallback(func(event.Event, any, error) {})); !errors.Is(err, event.ErrClosed) {
		t.Errorf("AddCallback after Close = %v, want ErrClosed", err)
	}
	// The C handle is freed by libuv's close callback, on the next turn.
	if diff := cmp.Diff(uv.UvtCounts{1, 1}, uv.UvtCountsOf(t, u)); diff != "" {
		t.Errorf("before the close callback (-want +got):\n%s", diff)
	}
	uv.UvtMust(t, u.RunOnce(context.Background()))
	s := u.Stats()
	if _, ok := s.Handles["trigger"]; ok || s.CHandles != 0 {
		t.Errorf("after one turn: CHandles=%d Handles=%v, want 0 and no trigger", s.CHandles, s.Handles)
	}
	// Close twice, Dispose, Stop: no-ops, nothing more delivered.
	if err := tr.Close(); err != nil {
		t.Errorf("second Close = %v, want nil", err)
	}
	tr.Dispose()
	if err := tr.Stop(); err != nil {
		t.Errorf("Stop after Close = %v", err)
	}
	if n := calls.N(); n != 1 {
		t.Errorf("%d notifications, want only the close", n)
	}
	uv.UvtShutdown(t, u, false)
}

func TestTriggerDisposeCloses(t *testing.T) {
	u := uv.UvtNewReactor(t)
	tr := uv.UvtNewTrigger(t, u)
	calls := uv.UvtSubscribe(t, tr, u.Owner().Owned)
	tr.Start()
	tr.Dispose()
	if got := calls.Calls(); len(got) != 1 || !errors.Is(got[0].Err, event.ErrClosed) {
		t.Fatalf("Dispose of the only reference: notifications %+v, want one ErrClosed", got)
	}
	if err := tr.Send(); !errors.Is(err, event.ErrClosed) {
		t.Errorf("Send after Dispose = %v, want ErrClosed", err)
	}
	tr.Dispose() // twice: no panic, no second release
	if err := tr.Close(); err != nil {
		t.Errorf("Close after Dispose = %v", err)
	}
	uv.UvtFinish(t, u, tr)
}

func TestTriggerReferenceFlagsResolveAndAwait(t *testing.T) {
	u := uv.UvtNewReactor(t)
	tr := uv.UvtNewTrigger(t, u)
	if !tr.Flags().Has(event.Reference) {
		t.Errorf("Trigger flags %v lack Reference", tr.Flags())
	}
	inner := event.Deref(tr)
	if inner == nil || inner == event.Event(tr) {
		t.Fatalf("Resolve(trigger) = %v, want the inner event, not the *Trigger", inner)
	}
	if _, isRef := inner.(*uv.Trigger); isRef {
		t.Fatal("Resolve returned a *Trigger")
	}
	if inner.Flags().Has(event.Reference) {
		t.Errorf("the resolved event has Reference: %v", inner.Flags())
	}
	if got, want := inner.Info(), tr.Info(); got != want {
		t.Errorf("inner Info %q != reference Info %q", got, want)
	}
	uv.UvtMust(t, tr.Start())
	stop := uv.UvtServe(t, u)
	type awaited struct {
		outs []event.Outcome
		err  error
	}
	res := make(chan awaited, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
		defer cancel()
		outs, err := event.Await(ctx, event.Any(), tr)
		res <- awaited{outs, err}
	}()
	uv.UvtWaitFor(t, "Await to subscribe", func() bool { return eventkind.Subscribers(tr) == 1 })
	uv.UvtMust(t, tr.Send())
	got := uv.UvtRecv(t, res, "Await result")
	want := awaited{outs: []event.Outcome{{Index: 0, Event: tr, Done: true}}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(awaited{}), cmpopts.EquateErrors(), eqEvent); diff != "" {
		t.Errorf("Await (-want +got):\n%s", diff)
	}
	if n := eventkind.Subscribers(tr); n != 0 {
		t.Errorf("Await left %d subscriber(s)", n)
	}
	stop()
	uv.UvtFinish(t, u, tr)
}

// Await on a closed trigger (it cannot replay) is an error, not a hang.
func TestTriggerAwaitClosedIsError(t *testing.T) {
	u := uv.UvtNewReactor(t)
	tr := uv.UvtNewTrigger(t, u)
	tr.Close()
	outs, err := event.Await(context.Background(), event.Any(), tr)
	if !errors.Is(err, event.ErrClosed) || len(outs) != 1 {
		t.Errorf("Await on a closed trigger = %v, %v; want one outcome and ErrClosed", outs, err)
	}
	uv.UvtFinish(t, u, tr)
}

// Eight goroutines send in a loop while the loop goroutine closes the
// trigger: uv_async_send must never race uv_close (run with -race; a send on
// a closing handle is a use-after-free that ASan sees).
func TestTriggerSendRacingCloseOnLoop(t *testing.T) {
	u := uv.UvtNewReactor(t)
	stop := uv.UvtServe(t, u)
	const rounds, senders = 20, 8
	for round := range rounds {
		tr := uv.UvtNewTrigger(t, u)
		calls := uv.UvtSubscribe(t, tr, u.Owner().Owned)
		uv.UvtMust(t, tr.Start())
		var started, done sync.WaitGroup
		var ok atomic.Int64
		errs := make(chan error, senders)
		for range senders {
			started.Add(1)
			done.Add(1)
			go func() {
				defer done.Done()
				err := tr.Send()
				started.Done()
				for ; err == nil; err = tr.Send() {
					ok.Add(1)
				}
				errs <- err
			}()
		}
		started.Wait()
		// Close on the loop goroutine, while the senders hammer.
		var onLoop bool
		uv.UvtMust(t, u.Call(func() { onLoop = u.Owner().Owned(); tr.Close() }))
		if !onLoop {
			t.Fatal("Call while Serve runs did not run on the loop")
		}
		done.Wait()
		close(errs)
		for err := range errs {
			if !errors.Is(err, event.ErrClosed) {
				t.Fatalf("round %d: a sender ended with %v, want ErrClosed", round, err)
			}
		}
		last := calls.Calls()
		if len(last) == 0 || !errors.Is(last[len(last)-1].Err, event.ErrClosed) {
			t.Fatalf("round %d: last notification is not the close", round)
		}
		if round == 0 {
			t.Logf("round 0: %d successful sends, %d notifications", ok.Load(), len(last))
		}
	}
	uv.UvtWaitFor(t, "every close callback", func() bool { return uv.UvtCountsOf(t, u) == uv.UvtCounts{} })
	stop()
	uv.UvtShutdown(t, u, false)
}

// Senders racing the reactor's own Close (which closes every trigger).
func TestTriggerSendRacingReactorClose(t *testing.T) {
	u := uv.UvtNewReactor(t)
	tr := uv.UvtNewTrigger(t, u)
	tr.Start()
	const senders = 8
	var started, done sync.WaitGroup
	errs := make(chan error, senders)
	for range senders {
		started.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			err := tr.Send()
			started.Done()
			for err == nil {
				err = tr.Send()
			}
			errs <- err
		}()
	}
	started.Wait()
	uv.UvtShutdown(t, u, false)
	done.Wait()
	close(errs)
	for err := range errs {
		if !errors.Is(err, event.ErrClosed) {
			t.Errorf("a sender ended with %v, want ErrClosed", err)
		}
	}
}

// Operations on a closed reactor return errors and never crash.
func TestTriggerOnClosedReactor(t *testing.T) {
	u := uv.UvtNewReactor(t)
	tr := uv.UvtNewTrigger(t, u)
	calls := uv.UvtSubscribe(t, tr, u.Owner().Owned)
	tr.Start()
	uv.UvtShutdown(t, u, false)

	if got := calls.Calls(); len(got) != 1 || !errors.Is(got[0].Err, event.ErrClosed) {
		t.Errorf("subscribers at reactor Close: %+v, want one ErrClosed", got)
	}
	if _, err := uv.NewTrigger(u.Reactor); !errors.Is(err, reactor.ErrReactorClosed) {
		t.Errorf("NewTrigger on a closed reactor = %v, want ErrReactorClosed", err)
	}
	if err := tr.Send(); !errors.Is(err, event.ErrClosed) {
		t.Errorf("Send = %v, want ErrClosed", err)
	}
	for name, op := range map[string]func() error{
		"Start":       tr.Start,
		"Stop":        tr.Stop,
		"AddCallback": func() error { return tr.AddCallback(event.NewCallback(func(event.Event, any, error) {})) },
		"SetNotifyHook": func() error {
			return tr.SetNotifyHook(func(ev event.Event, r any, err error) (any, error, bool) { return r, err, true })
		},
	} {
		if err := op(); !errors.Is(err, reactor.ErrReactorClosed) {
			t.Errorf("%s on a closed reactor = %v, want ErrReactorClosed", name, err)
		}
	}
	if err := tr.Close(); err != nil && !errors.Is(err, reactor.ErrReactorClosed) {
		t.Errorf("Close on a closed reactor = %v, want nil or ErrReactorClosed", err)
	}
	tr.Dispose()
	if info := tr.Info(); info == "" {
		t.Error("Info on a closed reactor is empty")
	}
	if err := u.Call(func() {}); !errors.Is(err, reactor.ErrReactorClosed) {
		t.Errorf("Call = %v, want ErrReactorClosed", err)
	}
	if err := u.Serve(context.Background()); !errors.Is(err, reactor.ErrReactorClosed) {
		t.Errorf("Serve = %v, want ErrReactorClosed", err)
	}
}

// TestFenceRightAfterAClose: a fence taken right after another handle was
// closed, its close callback still to run, returns once its own send was
// seen and its own handle freed, and the closed handle is freed by then
// too (libuv runs the close callbacks pending in one pass). A fence that
// waited for the count of C handles to fall back to the one it started
// with returned with a handle still there, or never when both closes ran
// in the same pass.
func TestFenceRightAfterAClose(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		before := u.Stats().CHandles
		tr := uv.UvtNewTrigger(t, u)
		calls := uv.UvtSubscribe(t, tr, u.Owner().Owned)
		uv.UvtMust(t, tr.Start())
		uv.UvtMust(t, tr.Send())
		tr.Close()
		uv.UvtFence(t, u)
		if n := calls.N(); n > 1 {
			t.Errorf("%d notifications before the close, want at most 1", n)
		}
		if got := u.Stats().CHandles; got != before {
			t.Errorf("C handles after the fence = %d, want %d as before the closed trigger", got, before)
		}
	})
}

// serveAside runs r.Serve on a goroutine of its own; the function it
// returns waits for Serve to return, failing the test (what says where) if
// it has not within raceSafety.
func serveAside(t *testing.T, r *reactor.Reactor) (waitServed func(what string)) {
	served := make(chan error, 1)
	go func() { served <- r.Serve(context.Background()) }()
	return func(what string) {
		t.Helper()
		select {
		case <-served:
		case <-time.After(raceSafety):
			t.Fatalf("%s: Serve did not return", what)
		}
	}
}

// raceSafety bounds every wait of these attacks: a test that reaches it has
// hung, and fails instead of hanging.
const raceSafety = 20 * time.Second

// waitBounded waits for wg, failing the test (with every goroutine's stack)
// if it does not finish within raceSafety.
func waitBounded(t *testing.T, what string, wg *sync.WaitGroup) bool {
	t.Helper()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(raceSafety):
		buf := make([]byte, 1<<20)
		n := runtime.Stack(buf, true)
		t.Errorf("%s: hang after %v\n%s", what, raceSafety, buf[:n])
		return false
	}
}

// Close from one goroutine while others hammer the same triggers with every
// method, with Serve running. Every call must return (an error is fine), the
// Serve must end, and no C handle may remain.
func TestCloseRacesTriggerOperations(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		r := uv.UvtNewReactorOn(t, d).Reactor
		defer r.Close()
		const n = 16
		trs := make([]*uv.Trigger, n)
		for i := range trs {
			tr, err := uv.NewTrigger(r)
			if err != nil {
				t.Fatalf("NewTrigger: %v", err)
			}
			tr.AddCallback(event.NewCallback(func(event.Event, any, error) {}))
			trs[i] = tr
		}
		waitServed := serveAside(t, r)

		var wg sync.WaitGroup
		stop := make(chan struct{})
		for w := 0; w < 6; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					tr := trs[(i+w)%n]
					switch (i + w) % 7 {
					case 0:
						tr.Start()
					case 1:
						tr.Stop()
					case 2:
						tr.Send()
					case 3:
						tr.Retain()
						tr.Dispose()
					case 4:
						cb := event.NewCallback(func(event.Event, any, error) {})
						if tr.AddCallback(cb) == nil {
							tr.DelCallback(cb)
						}
					case 5:
						ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
						event.Await(ctx, event.Any(), tr)
						cancel()
					case 6:
						_ = tr.Info()
						_ = tr.Flags()
					}
				}
			}(w)
		}
		time.Sleep(50 * time.Millisecond) // let the hammering start; not a decision
		var cwg sync.WaitGroup
		errs := make([]error, 2)
		for i := range errs {
			cwg.Add(1)
			go func(i int) { defer cwg.Done(); errs[i] = r.Close() }(i)
		}
		if !waitBounded(t, "two concurrent Close", &cwg) {
			close(stop)
			return
		}
		for i, err := range errs {
			if err != nil {
				t.Errorf("Close #%d = %v, want nil", i, err)
			}
		}
		close(stop)
		waitBounded(t, "operations after Close", &wg)
		waitServed("after Close")
		for i, tr := range trs {
			if err := tr.Start(); !errors.Is(err, event.ErrClosed) && !errors.Is(err, reactor.ErrReactorClosed) {
				t.Errorf("trigger %d Start after Close = %v, want ErrClosed", i, err)
			}
			if err := tr.Send(); err == nil {
				t.Errorf("trigger %d Send after reactor Close = nil, want an error", i)
			}
		}
		if s := r.Stats(); s.CHandles != 0 || s.Active != 0 {
			t.Errorf("after Close: CHandles=%d Active=%d", s.CHandles, s.Active)
		}
	})
}

// Shutdown with contexts that expire at once or very soon, while Serve runs
// and goroutines keep operating, then a final Close. Shutdown must either
// succeed or return the context's error leaving the reactor usable for Close.
func TestShutdownShortContexts(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		for round := 0; round < 20; round++ {
			r := uv.UvtNewReactorOn(t, d).Reactor
			tr, err := uv.NewTrigger(r)
			if err != nil {
				t.Fatal(err)
			}
			tr.AddCallback(event.NewCallback(func(ev event.Event, _ any, _ error) {
				time.Sleep(100 * time.Microsecond) // a slow callback widens the window
			}))
			tr.Start()
			waitServed := serveAside(t, r)
			var wg sync.WaitGroup
			stop := make(chan struct{})
			conform.RepeatUntil(&wg, stop, func() { tr.Send() })
			ctx, cancel := context.WithTimeout(context.Background(), time.Duration(round)*50*time.Microsecond)
			serr := r.Shutdown(ctx)
			cancel()
			if serr != nil && !errors.Is(serr, context.DeadlineExceeded) {
				t.Errorf("round %d: Shutdown = %v, want nil or DeadlineExceeded", round, serr)
			}
			var cwg sync.WaitGroup
			cwg.Add(1)
			var cerr error
			go func() { defer cwg.Done(); cerr = r.Close() }()
			if !waitBounded(t, fmt.Sprintf("round %d: Close after Shutdown(%v)", round, serr), &cwg) {
				close(stop)
				return
			}
			if cerr != nil {
				t.Errorf("round %d: Close = %v", round, cerr)
			}
			close(stop)
			waitBounded(t, "sender", &wg)
			waitServed(fmt.Sprintf("round %d", round))
			if s := r.Stats(); s.CHandles != 0 {
				t.Errorf("round %d: CHandles=%d after Close", round, s.CHandles)
			}
		}
	})
}

// Triggers created while Close runs are either refused or closed by it:
// Close succeeds and no C handle is left.
func TestCloseWhileTriggersAreCreated(t *testing.T) {
	uv.UvtNeedsLibuv(t)
	for round := range 50 {
		r := uv.UvtNewReactor(t).Reactor
		var wg sync.WaitGroup
		start := make(chan struct{})
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				for {
					if _, err := uv.NewTrigger(r); err != nil {
						if !errors.Is(err, reactor.ErrReactorClosed) {
							t.Errorf("NewTrigger during Close: %v", err)
						}
						return
					}
				}
			}()
		}
		close(start)
		if err := r.Close(); err != nil {
			t.Fatalf("round %d: Close = %v", round, err)
		}
		wg.Wait()
		if s := r.Stats(); s.CHandles != 0 || len(s.Handles) != 0 {
			t.Fatalf("round %d: left after Close: %+v", round, s)
		}
	}
}

// Two cooperative coroutines that hand the baton to each other forever do
// not keep I/O readiness from being served: a trigger sent from another
// goroutine (libuv's backend descriptor on the libuv driver, the poller's
// wake-up on the pure-Go driver) fires while they ping-pong, and only its
// callback stops them. (The deadline only turns a hang into a failure.)
func TestTriggerServedWhileCoroutinesPingPong(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		r := u.Reactor
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		tr, err := uv.NewTrigger(r)
		uv.UvtMust(t, err)
		var fired bool // loop-owned
		var rounds int
		event.Subscribe(tr, func(_ event.Event, _ any, err error) {
			if err == nil {
				fired = true
				tr.Close()
			}
		})
		uv.UvtMust(t, tr.Start())
		inA, inB := event.NewFuture[int](r), event.NewFuture[int](r)
		a, err := reactor.Spawn(ctx, r, func(ctx context.Context) (int, error) {
			for {
				inA = event.NewFuture[int](r)
				if fired {
					inB.Resolve(-1)
					return rounds, nil
				}
				if rounds++; rounds == 100 {
					go tr.Send() // from outside the loop, while they ping-pong
				}
				inB.Resolve(rounds)
				if _, err := inA.Await(ctx); err != nil {
					return rounds, err
				}
			}
		})
		uv.UvtMust(t, err)
		b, err := reactor.Spawn(ctx, r, func(ctx context.Context) (int, error) {
			for {
				v, err := inB.Await(ctx)
				if err != nil || v < 0 {
					return v, err
				}
				inB = event.NewFuture[int](r)
				inA.Resolve(v)
			}
		})
		uv.UvtMust(t, err)
		uv.UvtMust(t, r.Run(ctx))
		if !fired {
			t.Fatal("the trigger did not fire")
		}
		for _, c := range []*reactor.Coroutine[int]{a, b} {
			if _, ok, err := c.Outcome(); !ok || err != nil {
				t.Errorf("%s: outcome %v, %v: it did not stop by itself", c.Info(), ok, err)
			}
		}
	})
}

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
