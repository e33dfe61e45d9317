package uv_test

import (
	"context"
	"errors"
	"os"
	"runtime"
	"runtime/debug"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/eventref"
	"github.com/uvevent/uvevent/uv"
)

// dropTrigger creates a subscribed trigger, starts and stops it (a
// started one is the reactor's, docs/architecture.md §5), and drops it without Close. It returns its id and a channel closed when the *Trigger has been
// collected (a second cleanup on the same object, the test's own).
func dropTrigger(t *testing.T, u *uv.UvtReactor, calls *atomic.Int64) (eventref.ID, <-chan struct{}) {
	t.Helper()
	tr, err := uv.NewTrigger(u.Reactor)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := event.Subscribe(tr, func(event.Event, any, error) { calls.Add(1) }); err != nil {
		t.Fatal(err)
	}
	uv.UvtMust(t, tr.Start())
	uv.UvtMust(t, tr.Stop())
	gone := make(chan struct{})
	runtime.AddCleanup(tr, func(ch chan struct{}) { close(ch) }, gone)
	return uv.UvtTriggerID(tr), gone
}

// (a) A stopped trigger dropped without Close is closed after a GC cycle
// plus loop turns: its subscriber hears ErrClosed once, and nothing is
// reported.
func TestChurnDroppedTriggerIsClosed(t *testing.T) {
	uv.UvtNeedsLibuv(t)
	u := uv.UvtNewReactor(t)
	var calls atomic.Int64
	_, gone := dropTrigger(t, u, &calls)
	if diff := cmp.Diff(uv.UvtCounts{1, 1}, uv.UvtCountsOf(t, u)); diff != "" {
		t.Fatalf("before GC (-want +got):\n%s", diff)
	}
	if got := u.Stats().Active; got != 0 {
		t.Fatalf("Active = %d, want 0", got)
	}
	uv.UvtCollectUntil(t, u, "the dropped trigger's handle to be freed",
		func() bool { return uv.UvtCountsOf(t, u) == uv.UvtCounts{} })
	uv.UvtRecv(t, gone, "collection of the *Trigger")
	if got := u.Stats().Active; got != 0 {
		t.Errorf("Active after the drop = %d, want 0", got)
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("subscriber notified %d times, want once (ErrClosed at the implicit close)", n)
	}
	uv.UvtShutdown(t, u, false)
}

// The same while Serve runs: the cleanup wakes the parked loop.
func TestChurnDroppedTriggerIsClosedWhileServing(t *testing.T) {
	uv.UvtNeedsLibuv(t)
	u := uv.UvtNewReactor(t)
	stop := uv.UvtServe(t, u)
	var calls atomic.Int64
	dropTrigger(t, u, &calls)
	uv.UvtWaitFor(t, "the dropped trigger's handle to be freed", func() bool {
		runtime.GC()
		return uv.UvtCountsOf(t, u) == uv.UvtCounts{}
	})
	stop()
	uv.UvtShutdown(t, u, false)
}

// g1Count picks the G1 size and says why. The full million takes about 3 s
// on this 2-core machine (16 s under -race, 14 s under -asan), well inside
// the 60 s budget, so it is the normal suite's size; -short runs 100,000
// unless UVEVENT_G1=1 asks for the million.
func g1Count() (n int, why string) {
	const full, short = 1_000_000, 100_000
	build := ""
	if in := uv.UvtInstrumented(); in != "" {
		build = ", built with -" + in
	}
	switch {
	case os.Getenv("UVEVENT_G1") == "1":
		return full, "UVEVENT_G1=1" + build
	case testing.Short():
		return short, "-short: 100,000 instead of 1,000,000 (set UVEVENT_G1=1 for the million)" + build
	}
	return full, "normal suite" + build
}

// (b) G1: a million triggers created and dropped without Close under
// GOGC=10 leave no C handle after GC and loop turns, and nothing crashes.
func TestChurnG1MillionDroppedTriggers(t *testing.T) {
	uv.UvtNeedsLibuv(t)
	n, why := g1Count()
	t.Logf("G1 with %d triggers: %s", n, why)
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	u := uv.UvtNewReactor(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*uv.UvtSafety)
	defer cancel()
	const batch = 10_000
	start := time.Now()
	peak := 0
	for made := 0; made < n; made += batch {
		var err error
		if e := u.Call(func() {
			for range batch {
				var tr *uv.Trigger
				if tr, err = uv.NewTrigger(u.Reactor); err != nil {
					return
				}
				if made%(4*batch) == 0 {
					// some started and stopped again: a started one is
					// the reactor's, not the collector's
					if err = tr.Start(); err == nil {
						err = tr.Stop()
					}
				}
			}
		}); e != nil || err != nil {
			t.Fatalf("batch at %d: %v %v", made, e, err)
		}
		if c := u.Stats().CHandles; c > peak {
			peak = c
		}
		if (made/batch)%10 == 0 {
			runtime.GC()
		}
		if err := u.RunOnce(ctx); err != nil {
			t.Fatalf("RunOnce at %d: %v", made, err)
		}
	}
	uv.UvtCollectUntil(t, u, "every dropped trigger's handle to be freed", func() bool {
		s := u.Stats()
		return s.CHandles == 0 && s.Handles["trigger"] == 0
	})
	elapsed := time.Since(start)
	s := u.Stats()
	if s.CHandles != 0 || len(s.Handles) != 0 || s.Active != 0 {
		t.Errorf("after GC: CHandles=%d Handles=%v Active=%d, want none", s.CHandles, s.Handles, s.Active)
	}
	if peak == 0 {
		t.Error("no C handle was ever seen: the churn did not run")
	}
	t.Logf("G1: %d triggers in %v, peak %d live C handles, %d loop turns", n, elapsed, peak, s.Iterations)
	uv.UvtShutdown(t, u, false)
}

// (c) A stale id never reaches a recycled slot: a late Dropped for a
// trigger whose slot a new trigger now uses leaves the new one alone.
func TestChurnStaleIDNeverReachesRecycledSlot(t *testing.T) {
	uv.UvtNeedsLibuv(t)
	u := uv.UvtNewReactor(t)
	old := uv.UvtNewTrigger(t, u)
	oldID := uv.UvtTriggerID(old)
	old.Close()
	uv.UvtTurnUntil(t, u, "the old trigger's close callback", func() bool { return uv.UvtCountsOf(t, u) == uv.UvtCounts{} })

	tr := uv.UvtNewTrigger(t, u)
	newID := uv.UvtTriggerID(tr)
	if uint32(newID) != uint32(oldID) || newID == oldID {
		t.Fatalf("slot not recycled with a new generation: old id %#x, new id %#x", oldID, newID)
	}
	calls := uv.UvtSubscribe(t, tr, u.Owner().Owned)
	uv.UvtMust(t, tr.Start())
	// The late completion, as the runtime cleanup would deliver it (twice:
	// a stale id stays stale), then a turn that handles it.
	uv.UvtDropped(u.Reactor, oldID)
	uv.UvtDropped(u.Reactor, oldID)
	uv.UvtFence(t, u)

	if tr.Flags().Has(event.Closed) || len(calls.Calls()) != 0 {
		t.Fatalf("the stale id reached the new trigger: flags %v, notifications %+v", tr.Flags(), calls.Calls())
	}
	if diff := cmp.Diff(uv.UvtCounts{1, 1}, uv.UvtCountsOf(t, u)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if err := tr.Send(); err != nil {
		t.Fatalf("Send on the new trigger: %v", err)
	}
	uv.UvtTurnUntil(t, u, "the new trigger to fire", func() bool { return calls.N() == 1 })
	if c := calls.Calls()[0]; c.Err != nil || !c.OnLoop {
		t.Errorf("notification %+v, want a plain one on the loop", c)
	}
	// Its own reference is intact: Close releases it once, with no report.
	uv.UvtMust(t, tr.Close())
	if c := calls.Calls(); len(c) != 2 || !errors.Is(c[1].Err, event.ErrClosed) {
		t.Errorf("after Close: %+v, want the close notification", c)
	}
	uv.UvtTurnUntil(t, u, "the close callback", func() bool { return uv.UvtCountsOf(t, u) == uv.UvtCounts{} })
	uv.UvtShutdown(t, u, false)
}

// (d) A trigger closed explicitly and then collected is released once:
// no refcount panic is reported, the handle is freed. Where the reference's
// cleanup stays armed, its delivery is also simulated at the earliest moment
// it could come: before the loop turned, while the handle is still in the
// reactor's table.
func TestChurnClosedThenCollectedReleasesOnce(t *testing.T) {
	uv.UvtNeedsLibuv(t)
	for _, tc := range []struct {
		name  string
		how   func(*uv.Trigger)
		armed bool // the *Trigger's cleanup is still armed after how
	}{
		{"Close", func(tr *uv.Trigger) { tr.Close() }, false},
		{"Dispose", func(tr *uv.Trigger) { tr.Dispose() }, false},
		{"Close+Dispose", func(tr *uv.Trigger) { tr.Close(); tr.Dispose() }, false},
		// Closing the event itself leaves the reference's hold and cleanup:
		// the collector's release must be the only one.
		{"event Close", func(tr *uv.Trigger) { event.Deref(tr).Close() }, true},
		// Disposing the resolved event consumes the only hold; the
		// collector must not release it a second time.
		{"event Dispose", func(tr *uv.Trigger) { event.Deref(tr).Dispose() }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := uv.UvtNewReactor(t)
			var calls atomic.Int64
			tr := uv.UvtNewTrigger(t, u)
			if _, err := event.Subscribe(tr, func(event.Event, any, error) { calls.Add(1) }); err != nil {
				t.Fatal(err)
			}
			tr.Start()
			gone := make(chan struct{})
			runtime.AddCleanup(tr, func(ch chan struct{}) { close(ch) }, gone)
			tc.how(tr)
			if tc.armed {
				// The cleanup's delivery, before any turn. The *Trigger
				// stays alive until the id is retired, so that the real
				// cleanup, which comes later, is the late one of (c).
				uv.UvtDropped(u.Reactor, uv.UvtTriggerID(tr))
				uv.UvtTurnUntil(t, u, "the close callback", func() bool { return uv.UvtCountsOf(t, u) == uv.UvtCounts{} })
			}
			runtime.KeepAlive(tr)
			tr = nil
			ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
			defer cancel()
			for collected := false; !collected; {
				runtime.GC()
				select {
				case <-gone:
					collected = true
				case <-ctx.Done():
					t.Fatal("the *Trigger was never collected")
				case <-time.After(time.Millisecond):
				}
			}
			uv.UvtCollectUntil(t, u, "the handle to be freed", func() bool { return uv.UvtCountsOf(t, u) == uv.UvtCounts{} })
			if n := calls.Load(); n != 1 {
				t.Errorf("subscriber notified %d times, want once", n)
			}
			if reps := u.Reports(); len(reps) != 0 {
				t.Errorf("reports (a double release): %v", reps)
			}
			uv.UvtShutdown(t, u, true)
		})
	}
}

// Retain on a *Trigger adds a reference (the event.Event contract); as many
// Disposes as references must close the trigger.
func TestTriggerRetainThenDisposeEachReference(t *testing.T) {
	uv.UvtNeedsLibuv(t)
	u := uv.UvtNewReactor(t)
	tr := uv.UvtNewTrigger(t, u)
	tr.Retain()
	tr.Dispose()
	if err := tr.Send(); err != nil {
		t.Fatalf("one of two references disposed: Send = %v, want the trigger still open", err)
	}
	tr.Dispose()
	if err := tr.Send(); !errors.Is(err, event.ErrClosed) {
		t.Errorf("Retain + Dispose + Dispose: Send = %v, want ErrClosed (the second Dispose was ignored, the handle leaks)", err)
	}
	uv.UvtShutdown(t, u, false)
}

// The close callback of a trigger closed while the loop is not running runs
// on the next turn even when another event is active (the turn must not wait
// for I/O while libuv has close callbacks pending).
func TestTriggerCloseFreedOnNextTurnWhileAnotherActive(t *testing.T) {
	uv.UvtNeedsLibuv(t)
	u := uv.UvtNewReactor(t)
	busy := uv.UvtNewTrigger(t, u)
	fired := uv.UvtSubscribe(t, busy, u.Owner().Owned)
	busy.Start() // active: RunOnce is not idle
	tr := uv.UvtNewTrigger(t, u)
	// One turn with I/O, so that the loop has settled what it waits for.
	busy.Send()
	uv.UvtTurnUntil(t, u, "the busy trigger", func() bool { return fired.N() == 1 })
	if diff := cmp.Diff(uv.UvtCounts{2, 2}, uv.UvtCountsOf(t, u)); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	tr.Close()
	ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
	defer cancel()
	if err := u.RunOnce(ctx); err != nil {
		t.Errorf("RunOnce with a close callback pending = %v (it waited for I/O that never came)", err)
	}
	if diff := cmp.Diff(uv.UvtCounts{1, 1}, uv.UvtCountsOf(t, u)); diff != "" {
		t.Errorf("after one turn (-want +got):\n%s", diff)
	}
	uv.UvtFinish(t, u, busy)
}
