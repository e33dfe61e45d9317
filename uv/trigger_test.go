package uv_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/eventkind"
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
