package uv_test

import (
	"errors"
	"runtime"
	"sync"
	"testing"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/uv"
)

// Retain and Dispose pairs from many goroutines racing the creator's Dispose
// of its own reference, with the reactor serving: the event closes once, when
// the last reference goes; a Retain that comes after it is refused and
// reported (ErrReleased), never a panic; the handle is freed. Both drivers.
func TestRetainDisposeRacingTheLastDispose(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		const rounds, workers = 50, 8
		for range rounds {
			tr := uv.UvtNewTrigger(t, u)
			uv.UvtMust(t, tr.Start())
			var wg sync.WaitGroup
			for range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					tr.Retain()
					_ = tr.Send()
					tr.Dispose()
					tr.Dispose() // one too many: a no-op once all are gone
				}()
			}
			tr.Dispose() // the creator's
			wg.Wait()
			uv.UvtWaitFor(t, "the trigger closed by its last Dispose", func() bool {
				return tr.Flags().Has(event.Closed)
			})
			if err := tr.Start(); !errors.Is(err, event.ErrClosed) {
				t.Fatalf("Start after the last Dispose = %v, want ErrClosed", err)
			}
			if _, err := event.Subscribe(tr, func(event.Event, any, error) {}); !errors.Is(err, event.ErrClosed) {
				t.Fatalf("Subscribe after the last Dispose = %v, want ErrClosed", err)
			}
		}
		stopReportingOnlyReleased(t, u, stop)
	})
}

// The event behind a dropped Handle, reached through event.Deref, retained
// and disposed by goroutines while the collector's cleanup closes it: no
// panic, no report but ErrReleased, and no handle left. Both drivers.
func TestRetainRacingCollectorCleanup(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		const n = 20
		targets := make([]event.Event, n)
		for i := range targets {
			tr := uv.UvtNewTrigger(t, u)
			targets[i] = event.Deref(tr)
			// tr is dropped here, not closed: the cleanup closes its event.
		}
		var wg sync.WaitGroup
		for _, ev := range targets {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 50 {
					ev.Retain()
					ev.Dispose()
				}
			}()
		}
		for range 3 {
			runtime.GC()
		}
		wg.Wait()
		uv.UvtWaitFor(t, "the collector's cleanup to close every dropped trigger", func() bool {
			runtime.GC()
			for _, ev := range targets {
				if !ev.Flags().Has(event.Closed) {
					return false
				}
			}
			return true
		})
		stopReportingOnlyReleased(t, u, stop)
	})
}

// A callback released by its creator while the event is notifying it, and
// the event closed by another goroutine at the same time: the callback
// runs to its end, its OnDispose runs exactly once, and nothing is
// reported. Both drivers.
func TestCallbackReleasedWhileNotified(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		for range 50 {
			tr := uv.UvtNewTrigger(t, u)
			var disposed sync.WaitGroup
			disposed.Add(1)
			var mu sync.Mutex
			disposes := 0
			in := make(chan struct{})
			var once sync.Once
			cb := event.NewCallback(func(event.Event, any, error) {
				once.Do(func() { close(in) })
			}).OnDispose(func() {
				mu.Lock()
				disposes++
				mu.Unlock()
				disposed.Done()
			})
			uv.UvtMust(t, tr.AddCallback(cb))
			uv.UvtMust(t, tr.Start())
			uv.UvtMust(t, tr.Send())
			go cb.Release()
			<-in
			go tr.Close()
			disposed.Wait()
			cb.Retain() // after its last Release: logged, never a panic
			mu.Lock()
			if disposes != 1 {
				t.Fatalf("OnDispose ran %d times, want once", disposes)
			}
			mu.Unlock()
			uv.UvtWaitFor(t, "the trigger's Close", func() bool { return tr.Flags().Has(event.Closed) })
		}
		stop()
		uv.UvtShutdown(t, u, false)
	})
}

// One callback held by several events (as a waker's is) is let go of from
// many goroutines at once: its creator's Release, each event's DelCallback
// and Close, and Sends that notify it meanwhile. Its OnDispose runs exactly
// once, after the last holder let go, and nothing is reported. Both
// drivers.
func TestSharedCallbackLetGoFromManyGoroutines(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		for range 30 {
			var mu sync.Mutex
			disposes := 0
			done := make(chan struct{})
			cb := event.NewCallback(func(event.Event, any, error) {}).OnDispose(func() {
				mu.Lock()
				disposes++
				mu.Unlock()
				close(done)
			})
			var trs []*uv.Trigger
			for range 3 {
				tr := uv.UvtNewTrigger(t, u)
				uv.UvtMust(t, tr.AddCallback(cb))
				uv.UvtMust(t, tr.Start())
				trs = append(trs, tr)
			}
			var wg sync.WaitGroup
			wg.Add(1)
			go func() { defer wg.Done(); cb.Release() }()
			for i, tr := range trs {
				wg.Add(2)
				go func() { defer wg.Done(); _ = tr.Send(); _ = tr.Send() }()
				go func() {
					defer wg.Done()
					if i%2 == 0 {
						_ = tr.DelCallback(cb)
					}
					_ = tr.Close()
				}()
			}
			wg.Wait()
			<-done
			mu.Lock()
			if disposes != 1 {
				t.Fatalf("OnDispose ran %d times, want once", disposes)
			}
			mu.Unlock()
		}
		stop()
		uv.UvtShutdown(t, u, false)
	})
}

// stopReportingOnlyReleased stops serving u, checks that u reported
// nothing but ErrReleased (a Retain after the last Dispose), and shuts u
// down.
func stopReportingOnlyReleased(t *testing.T, u *uv.UvtReactor, stop func()) {
	t.Helper()
	stop()
	for _, r := range u.Reports() {
		if !errors.Is(r.Err, event.ErrReleased) {
			t.Errorf("report %v, want only ErrReleased (a Retain after the last Dispose)", r)
		}
	}
	uv.UvtShutdown(t, u, true)
}
