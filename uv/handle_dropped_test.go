package uv_test

import (
	"context"
	"errors"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// gcUntil runs GC and a loop turn until cond holds, failing at raceSafety.
func gcUntil(t *testing.T, r *reactor.Reactor, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(raceSafety)
	for !cond() {
		if time.Now().After(deadline) {
			s := r.Stats()
			t.Fatalf("%s: not reached after %v (Active=%d CHandles=%d Timers=%d Handles=%v)",
				what, raceSafety, s.Active, s.CHandles, s.Timers, s.Handles)
		}
		runtime.GC()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
		r.RunOnce(ctx)
		cancel()
	}
}

// A started, subscribed trigger dropped without Close is its reactor's
// (docs/architecture.md §5), on both drivers: through collections and turns it counts as
// active, so Run goes on, until the reactor's Close closes it (its
// subscriber hears ErrClosed once). A stopped one is collected (the
// conformance table's DroppedIsFreed).
func TestDroppedStartedTriggerKeepsRunGoing(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		r := uv.UvtNewReactorOn(t, d).Reactor
		defer r.Close()
		var closed atomic.Int32
		func() {
			tr, err := uv.NewTrigger(r)
			if err != nil {
				t.Fatal(err)
			}
			event.Subscribe(tr, func(_ event.Event, _ any, err error) {
				if errors.Is(err, event.ErrClosed) {
					closed.Add(1)
				}
			})
			tr.Start()
		}()
		for range 3 {
			runtime.GC()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
			r.RunOnce(ctx)
			cancel()
		}
		if !r.Alive() || closed.Load() != 0 {
			t.Fatalf("a dropped started trigger: Alive %v, ErrClosed heard %d times; want alive, none", r.Alive(), closed.Load())
		}
		if err := closeBounded(t, r); err != nil {
			t.Fatal(err)
		}
		if n := closed.Load(); n != 1 {
			t.Errorf("subscriber heard ErrClosed %d times, want 1", n)
		}
		if s := r.Stats(); s.CHandles != 0 || s.Active != 0 {
			t.Errorf("after Close: %+v", s)
		}
	})
}

// G1 on both drivers, for triggers and timers: a million events (a
// quarter started: the triggers stopped again, since a started one is the
// reactor's; the timers fire and end) dropped without Close under GOGC=10 leave nothing
// active, no timer on the wheel, no C handle, and the heap does not keep
// them. The libuv-driver trigger case is also in trigger_churn_test.go;
// the timer and the pure-Go driver cases are not.
func TestG1MillionDroppedBothDrivers(t *testing.T) {
	n := 1_000_000
	if testing.Short() {
		n = 100_000
		t.Logf("-short: %d events instead of a million", n)
	}
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		for _, what := range []string{"trigger", "timer"} {
			t.Run(what, func(t *testing.T) {
				r := uv.UvtNewReactorOn(t, d).Reactor
				defer r.Close()
				runtime.GC()
				var before runtime.MemStats
				runtime.ReadMemStats(&before)
				const batch = 10_000
				for made := 0; made < n; made += batch {
					var err error
					if e := r.Call(func() {
						for i := range batch {
							var ev event.Event
							switch what {
							case "trigger":
								var tr *uv.Trigger
								tr, err = uv.NewTrigger(r)
								ev = tr
							case "timer":
								var tm *reactor.Timer
								tm, err = r.NewTimer(time.Millisecond, 0)
								ev = tm
							}
							if err != nil {
								return
							}
							if i%4 == 0 {
								if err = ev.Start(); err != nil {
									return
								}
								if what == "trigger" {
									err = ev.Stop()
								}
							}
						}
					}); e != nil || err != nil {
						t.Fatalf("batch at %d: %v %v", made, e, err)
					}
					if (made/batch)%10 == 0 {
						runtime.GC()
					}
					ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
					r.RunOnce(ctx)
					cancel()
				}
				gcUntil(t, r, "every dropped event to be gone", func() bool {
					s := r.Stats()
					return s.Active == 0 && s.CHandles == 0 && s.Timers == 0 && !r.Alive()
				})
				runtime.GC()
				runtime.GC()
				var after runtime.MemStats
				runtime.ReadMemStats(&after)
				grown := int64(after.HeapAlloc) - int64(before.HeapAlloc)
				// A million dropped events held by anything would be
				// hundreds of bytes each: 100 MB. 32 MB allows for the
				// reactor's tables keeping their high-water capacity.
				if grown > 32<<20 {
					t.Errorf("%s/%v: heap grew by %d MB after dropping %d events and collecting: something keeps them",
						what, d, grown>>20, n)
				}
				t.Logf("%s/%v: heap %+d KB after %d dropped", what, d, grown>>10, n)
				if err := closeBounded(t, r); err != nil {
					t.Fatal(err)
				}
			})
		}
	})
}

// References dropped and collected while the reactor closes: a goroutine
// keeps creating and dropping started triggers and timers, another runs
// the collector in a loop, Serve runs, and Close comes in the middle. No
// panic, Close returns, nothing is left, and later constructors refuse.
func TestDroppedRefsRaceClose(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		for round := 0; round < 10; round++ {
			r := uv.UvtNewReactorOn(t, d).Reactor
			serveDone := make(chan error, 1)
			go func() { serveDone <- r.Serve(context.Background()) }()
			stop := make(chan struct{})
			var wg sync.WaitGroup
			wg.Add(3)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
						runtime.GC()
					}
				}
			}()
			for w := 0; w < 2; w++ {
				go func() {
					defer wg.Done()
					for i := 0; ; i++ {
						select {
						case <-stop:
							return
						default:
						}
						if tr, err := uv.NewTrigger(r); err == nil {
							event.Subscribe(tr, func(event.Event, any, error) {})
							tr.Start()
							tr.Send()
						}
						if tm, err := r.NewTimer(0, 0); err == nil {
							tm.Start()
						}
					}
				}()
			}
			time.Sleep(time.Duration(round) * 3 * time.Millisecond) // vary where Close lands; not a decision
			if err := closeBounded(t, r); err != nil {
				close(stop)
				t.Fatalf("round %d: Close = %v", round, err)
			}
			close(stop)
			waitBounded(t, "droppers", &wg)
			select {
			case <-serveDone:
			case <-time.After(raceSafety):
				t.Fatalf("round %d: Serve did not return", round)
			}
			for i := 0; i < 3; i++ {
				runtime.GC() // cleanups of references dropped before Close run after it
			}
			if s := r.Stats(); s.CHandles != 0 || s.Active != 0 || s.Timers != 0 {
				t.Errorf("round %d: after Close: CHandles=%d Active=%d Timers=%d", round, s.CHandles, s.Active, s.Timers)
			}
			if _, err := uv.NewTrigger(r); !errors.Is(err, reactor.ErrReactorClosed) {
				t.Errorf("round %d: NewTrigger after Close = %v, want ErrReactorClosed", round, err)
			}
		}
	})
}

// A callback that captures its own *Trigger keeps it reachable (documented:
// never collected); the reactor's Close must still close and free it, and
// its subscriber hear ErrClosed once.
func TestSelfCapturingCallbackClosedByReactorClose(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		r := uv.UvtNewReactorOn(t, d).Reactor
		var closedN atomic.Int32
		func() {
			tr, err := uv.NewTrigger(r)
			if err != nil {
				t.Fatal(err)
			}
			event.Subscribe(tr, func(_ event.Event, _ any, err error) {
				if errors.Is(err, event.ErrClosed) {
					closedN.Add(1)
				}
				if err == nil {
					_ = tr.Flags() // the capture
				}
			})
			tr.Start()
			tr.Send()
		}()
		for i := 0; i < 3; i++ {
			runtime.GC()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
			r.RunOnce(ctx)
			cancel()
		}
		if err := closeBounded(t, r); err != nil {
			t.Fatal(err)
		}
		if n := closedN.Load(); n != 1 {
			t.Errorf("subscriber heard ErrClosed %d times, want 1", n)
		}
		if s := r.Stats(); s.CHandles != 0 || s.Active != 0 {
			t.Errorf("after Close: CHandles=%d Active=%d", s.CHandles, s.Active)
		}
	})
}

// One trigger retained by many goroutines and disposed by as many plus
// one, all at once, with Serve running: it closes exactly once (its
// subscriber hears ErrClosed once), only after the last Dispose, and extra
// Disposes after that do nothing (no panic, no report of a negative count).
func TestRetainDisposeFromManyGoroutines(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		u := uv.UvtNewReactorOn(t, d)
		r := u.Reactor
		defer r.Close()
		serveDone := make(chan error, 1)
		go func() { serveDone <- r.Serve(context.Background()) }()
		const n = 64
		for round := 0; round < 20; round++ {
			tr, err := uv.NewTrigger(r)
			if err != nil {
				t.Fatal(err)
			}
			var closedN atomic.Int32
			event.Subscribe(tr, func(_ event.Event, _ any, err error) {
				if errors.Is(err, event.ErrClosed) {
					closedN.Add(1)
				}
			})
			tr.Start()
			var wg sync.WaitGroup
			for i := 0; i < n; i++ {
				wg.Add(1)
				go func() { defer wg.Done(); tr.Retain() }()
			}
			waitBounded(t, "retains", &wg)
			for i := 0; i < n; i++ {
				wg.Add(1)
				go func() { defer wg.Done(); tr.Dispose(); tr.Send() }()
			}
			waitBounded(t, "disposes", &wg)
			if tr.Flags().Has(event.Closed) {
				t.Fatalf("round %d: closed after %d of %d+1 Disposes", round, n, n)
			}
			for i := 0; i < 4; i++ {
				wg.Add(1)
				go func() { defer wg.Done(); tr.Dispose() }()
			}
			waitBounded(t, "last disposes", &wg)
			if !tr.Flags().Has(event.Closed) {
				t.Errorf("round %d: not closed after the last Dispose", round)
			}
			if c := closedN.Load(); c != 1 {
				t.Errorf("round %d: ErrClosed heard %d times, want 1", round, c)
			}
		}
		if err := closeBounded(t, r); err != nil {
			t.Fatal(err)
		}
		<-serveDone
		if s := r.Stats(); s.CHandles != 0 {
			t.Errorf("CHandles=%d after Close", s.CHandles)
		}
		reps := u.Reports()
		t.Logf("%d reports: %v", len(reps), reps)
	})
}
