package reactor_test

import (
	"context"
	"testing"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
)

// Coroutines still running when the reactor closes have their contexts
// cancelled by Close; once they have all ended, Stats must not count any
// (Stats after Close is what a test checks to see nothing is left alive).
func TestCoroutinesEndedAfterCloseAreNotCounted(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		for _, how := range []string{"Go blocked on ctx", "Spawn awaiting a future", "Go awaiting a future"} {
			t.Run(how, func(t *testing.T) {
				r, err := reactor.New(reactor.Options{Driver: d, OnReport: func(event.Event, string, error) {}})
				if err != nil {
					t.Fatal(err)
				}
				fut := event.NewFuture[int](r)
				ended := make(chan struct{})
				fn := func(ctx context.Context) (int, error) {
					defer close(ended)
					if how == "Go blocked on ctx" {
						<-ctx.Done()
						return 0, ctx.Err()
					}
					return fut.Await(ctx)
				}
				if how == "Spawn awaiting a future" {
					_, err = reactor.Spawn(context.Background(), r, fn)
				} else {
					_, err = reactor.Go(context.Background(), r, fn)
				}
				if err != nil {
					t.Fatal(err)
				}
				serveDone := make(chan error, 1)
				go func() { serveDone <- r.Serve(context.Background()) }()
				time.Sleep(20 * time.Millisecond) // let it start waiting; not a decision
				onGoroutine(t, "Close", func() { r.Close() })
				select {
				case <-ended:
				case <-time.After(ownSafety):
					t.Fatalf("the coroutine never ended after Close")
				}
				<-serveDone
				time.Sleep(50 * time.Millisecond) // let its goroutine finish its bookkeeping; not a decision
				if s := r.Stats(); s.Coroutines != 0 || s.Waiting != 0 {
					t.Errorf("after Close, the coroutine ended: Stats Coroutines=%d Waiting=%d, want 0", s.Coroutines, s.Waiting)
				}
			})
		}
	})
}
