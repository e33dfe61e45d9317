package reactor_test

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
)

const ownSafety = 20 * time.Second

// onGoroutine runs fn in a new goroutine and waits for it to end (returned
// or Goexit), failing on a hang.
func onGoroutine(t *testing.T, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); fn() }()
	select {
	case <-done:
	case <-time.After(ownSafety):
		buf := make([]byte, 1<<20)
		t.Fatalf("%s: hang\n%s", what, buf[:runtime.Stack(buf, true)])
	}
}

// A goroutine that ends with runtime.Goexit while it owns the loop — in an
// operation it runs directly (Call, Post with no loop running), in a timer
// callback inside RunOnce, or in a callback run by Close — must not leave
// the reactor owned by a dead goroutine: many fresh goroutines (which may
// reuse the dead one's descriptor) must then be able to Call and Close, and
// Close must free everything and end waits.
func TestGoexitWhileOwningReleasesOwnership(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		ways := map[string]func(t *testing.T, r *reactor.Reactor){
			"Call direct": func(t *testing.T, r *reactor.Reactor) {
				onGoroutine(t, "Call+Goexit", func() { r.Call(runtime.Goexit) })
			},
			"Post direct": func(t *testing.T, r *reactor.Reactor) {
				onGoroutine(t, "Post+Goexit", func() { r.Post(runtime.Goexit) })
			},
			"timer callback": func(t *testing.T, r *reactor.Reactor) {
				tm, err := r.NewTimer(0, 0)
				if err != nil {
					t.Fatal(err)
				}
				event.Subscribe(tm, func(_ event.Event, _ any, err error) {
					if err == nil {
						runtime.Goexit()
					}
				})
				tm.Start()
				onGoroutine(t, "RunOnce+Goexit", func() {
					ctx, cancel := context.WithTimeout(context.Background(), ownSafety)
					defer cancel()
					r.RunOnce(ctx)
				})
			},
			"close notification": func(t *testing.T, r *reactor.Reactor) {
				tm, err := r.NewTimer(time.Hour, 0)
				if err != nil {
					t.Fatal(err)
				}
				event.Subscribe(tm, func(_ event.Event, _ any, err error) {
					if errors.Is(err, event.ErrClosed) {
						runtime.Goexit()
					}
				})
				tm.Start()
				onGoroutine(t, "Close+Goexit", func() { r.Close() })
			},
		}
		for name, way := range ways {
			t.Run(name, func(t *testing.T) {
				r, err := reactor.New(reactor.Options{Driver: d, OnReport: func(event.Event, string, error) {}})
				if err != nil {
					t.Fatal(err)
				}
				fut := event.NewFuture[int](r)
				waitEnded := make(chan error, 1)
				go func() {
					ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
					defer cancel()
					_, err := fut.Await(ctx)
					waitEnded <- err
				}()
				time.Sleep(10 * time.Millisecond) // let the wait register; not a decision
				way(t, r)
				if s := r.Stats(); s.Running {
					t.Errorf("%s: Stats.Running after the owning goroutine ended", name)
				}
				// Many fresh goroutines: one of them is likely to get the dead
				// goroutine's descriptor back.
				var wg sync.WaitGroup
				var mu sync.Mutex
				var errs []error
				for i := 0; i < 64; i++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						if err := r.Call(func() {}); err != nil && !errors.Is(err, reactor.ErrReactorClosed) {
							mu.Lock()
							errs = append(errs, err)
							mu.Unlock()
						}
					}()
				}
				wg.Wait()
				if len(errs) > 0 {
					t.Errorf("%s: Call from fresh goroutines failed %d times: %v", name, len(errs), errs[0])
				}
				onGoroutine(t, "Close", func() {
					if err := r.Close(); err != nil {
						t.Errorf("%s: Close = %v", name, err)
					}
				})
				select {
				case err := <-waitEnded:
					if !errors.Is(err, reactor.ErrReactorClosed) {
						t.Errorf("%s: a wait on the reactor ended with %v, want ErrReactorClosed", name, err)
					}
				case <-time.After(ownSafety):
					t.Errorf("%s: the wait never ended", name)
				}
				if s := r.Stats(); s.Running || s.CHandles != 0 || s.Timers != 0 {
					t.Errorf("%s: after Close: Running=%v CHandles=%d Timers=%d", name, s.Running, s.CHandles, s.Timers)
				}
			})
		}
	})
}
