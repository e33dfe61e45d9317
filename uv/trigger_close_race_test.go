package uv_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

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
		serveDone := make(chan error, 1)
		go func() { serveDone <- r.Serve(context.Background()) }()

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
		select {
		case <-serveDone:
		case <-time.After(raceSafety):
			t.Fatalf("Serve did not return after Close")
		}
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
			serveDone := make(chan error, 1)
			go func() { serveDone <- r.Serve(context.Background()) }()
			var wg sync.WaitGroup
			stop := make(chan struct{})
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
						tr.Send()
					}
				}
			}()
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
			select {
			case <-serveDone:
			case <-time.After(raceSafety):
				t.Fatalf("round %d: Serve did not return", round)
			}
			if s := r.Stats(); s.CHandles != 0 {
				t.Errorf("round %d: CHandles=%d after Close", round, s.CHandles)
			}
		}
	})
}
