package loop_test

import (
	"context"
	"errors"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/uvevent/uvevent/loop"
	"github.com/uvevent/uvevent/reactor"
)

// Delays fire once each, by deadline; one removed before it fires is never
// called; Off reports what it removed.
func TestDelay(t *testing.T) {
	eachDriver(t, func(t *testing.T, l *tloop) {
		var got []string
		for _, c := range []struct {
			d    time.Duration
			name string
		}{{0, "zero"}, {2 * time.Millisecond, "two"}, {5 * time.Millisecond, "five"}} {
			_, err := l.Delay(c.d, func() { got = append(got, c.name) })
			must(t, err)
		}
		gone, err := l.Delay(time.Millisecond, func() { got = append(got, "removed") })
		must(t, err)
		if n := l.TimerCount(); n != 4 {
			t.Fatalf("TimerCount = %d, want 4", n)
		}
		if !l.OffDelay(gone) {
			t.Fatal("OffDelay of a pending delay = false, want true")
		}
		if l.OffDelay(gone) {
			t.Error("second OffDelay = true, want false")
		}
		if l.OffDelay(loop.DelayID{}) {
			t.Error("OffDelay of the zero id = true, want false")
		}
		if n := l.TimerCount(); n != 3 {
			t.Fatalf("TimerCount after OffDelay = %d, want 3", n)
		}
		run(t, l)
		if diff := cmp.Diff([]string{"zero", "two", "five"}, got); diff != "" {
			t.Errorf("calls (-want +got):\n%s", diff)
		}
		if n := l.TimerCount(); n != 0 {
			t.Errorf("TimerCount after firing = %d, want 0", n)
		}
	})
}

// A repeating timer fires until its callback removes it; Run then ends.
func TestRepeat(t *testing.T) {
	eachDriver(t, func(t *testing.T, l *tloop) {
		calls := 0
		var id loop.RepeatID
		var offs []bool
		id, err := l.Repeat(time.Millisecond, func() {
			calls++
			if calls == 3 {
				offs = append(offs, l.OffRepeat(id), l.OffRepeat(id))
			}
		})
		must(t, err)
		if s := id.String(); s != "repeat#1" {
			t.Errorf("id = %s, want repeat#1", s)
		}
		run(t, l)
		if calls != 3 {
			t.Errorf("calls = %d, want 3", calls)
		}
		if diff := cmp.Diff([]bool{true, false}, offs); diff != "" {
			t.Errorf("OffRepeat results (-want +got):\n%s", diff)
		}
	})
}

// Stop ends one Run; the timers stay and a later Run goes on with them;
// DeleteAllTimers removes them all.
func TestStopAndDeleteAllTimers(t *testing.T) {
	eachDriver(t, func(t *testing.T, l *tloop) {
		calls := 0
		_, err := l.Repeat(time.Millisecond, func() {
			calls++
			if calls%2 == 0 {
				l.Stop()
			}
		})
		must(t, err)
		_, err = l.Delay(time.Hour, func() { t.Error("an hour passed") })
		must(t, err)
		for want := 2; want <= 4; want += 2 {
			run(t, l)
			if calls != want {
				t.Fatalf("after Run: calls = %d, want %d", calls, want)
			}
			if n := l.TimerCount(); n != 2 {
				t.Fatalf("TimerCount = %d, want 2", n)
			}
		}
		l.DeleteAllTimers()
		if n := l.TimerCount(); n != 0 {
			t.Errorf("TimerCount after DeleteAllTimers = %d, want 0", n)
		}
		run(t, l) // nothing left: returns at once
		if calls != 4 {
			t.Errorf("calls after DeleteAllTimers = %d, want 4", calls)
		}
	})
}

// Bad input gets a clear error and the loop keeps working.
func TestTimerBadInput(t *testing.T) {
	eachDriver(t, func(t *testing.T, l *tloop) {
		for name, err := range map[string]error{
			"negative delay":  second(l.Delay(-time.Second, func() {})),
			"nil delay fn":    second(l.Delay(time.Second, nil)),
			"zero interval":   second(l.Repeat(0, func() {})),
			"negative repeat": second(l.Repeat(-1, func() {})),
			"nil repeat fn":   second(l.Repeat(time.Second, nil)),
		} {
			if !errors.Is(err, syscall.EINVAL) {
				t.Errorf("%s: err = %v, want EINVAL", name, err)
			}
		}
		if n := l.TimerCount(); n != 0 {
			t.Errorf("TimerCount after refusals = %d, want 0", n)
		}
		fired := false
		_, err := l.Delay(0, func() { fired = true })
		must(t, err)
		run(t, l)
		if !fired {
			t.Error("a delay after bad input did not fire")
		}
	})
}

func second[T any](_ T, err error) error { return err }

// Delay and OffDelay race from many goroutines while the loop serves: for
// every id, exactly one of "fired" and "OffDelay returned true" happens.
func TestDelayOffRace(t *testing.T) {
	eachDriver(t, func(t *testing.T, l *tloop) {
		ctx, cancel := context.WithTimeout(context.Background(), safety)
		defer cancel()
		served := make(chan error, 1)
		go func() { served <- l.Reactor().Serve(ctx) }()

		var mu sync.Mutex
		fired := map[loop.DelayID]int{}
		removed := map[loop.DelayID]bool{}
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 50 {
					var id loop.DelayID
					var idMu sync.Mutex
					idMu.Lock()
					id, err := l.Delay(time.Duration(i%2)*time.Millisecond, func() {
						idMu.Lock()
						defer idMu.Unlock()
						mu.Lock()
						fired[id]++
						mu.Unlock()
					})
					idMu.Unlock()
					if err != nil {
						t.Error(err)
						return
					}
					if (g+i)%3 == 0 {
						ok := l.OffDelay(id)
						mu.Lock()
						removed[id] = ok
						mu.Unlock()
					}
				}
			}()
		}
		wg.Wait()
		for l.TimerCount() > 0 && ctx.Err() == nil {
			time.Sleep(time.Millisecond)
		}
		l.Stop()
		if err := <-served; err != nil {
			t.Fatalf("Serve: %v", err)
		}
		mu.Lock()
		defer mu.Unlock()
		ids := map[loop.DelayID]bool{}
		for id := range fired {
			ids[id] = true
		}
		for id := range removed {
			ids[id] = true
		}
		if len(ids) != 400 {
			t.Errorf("%d ids seen, want 400", len(ids))
		}
		for id := range ids {
			if n := fired[id]; n > 1 || (n == 1) == removed[id] {
				t.Errorf("%v: fired %d times, OffDelay true: %v", id, n, removed[id])
			}
		}
	})
}

// A loop over a reactor it was given leaves the reactor open at Close and
// removes only its own registrations.
func TestLoopOnGivenReactor(t *testing.T) {
	for _, d := range drivers {
		t.Run(d.String(), func(t *testing.T) {
			r, err := reactor.New(reactor.Options{Driver: d})
			if errors.Is(err, reactor.ErrNoLibuv) {
				t.Skipf("the %v driver is not in this build (built without cgo): %v", d, err)
			}
			must(t, err)
			defer r.Close()
			l, err := loop.New(loop.Options{Reactor: r})
			must(t, err)
			other, err := r.NewTimer(time.Hour, 0)
			must(t, err)
			must(t, other.Start())
			_, err = l.Repeat(time.Hour, func() {})
			must(t, err)
			fds := socketpair(t)
			must(t, l.OnReadable(fds[0], func(int) {}))
			must(t, l.OnSignal(syscall.SIGUSR2, func(syscall.Signal) {}, loop.SignalOptions{}))
			must(t, l.Close())
			if n := l.TimerCount(); n != 0 {
				t.Errorf("TimerCount after Close = %d, want 0", n)
			}
			if l.OffReadable(fds[0]) || l.OffSignal(syscall.SIGUSR2) {
				t.Error("registrations survived Close")
			}
			if s := r.Stats(); s.Active != 1 || s.Timers != 1 {
				t.Errorf("reactor after the loop's Close: Active=%d Timers=%d, want 1 and 1 (its own timer)", s.Active, s.Timers)
			}
			must(t, r.Close())
			noPollerGoroutine(t)
		})
	}
}
