package reactor_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
)

// Goroutines posting flat out must not starve the loop: RunOnce returns
// (one turn runs what was queued when it began, or a bounded amount), and
// a 1 ms timer fires under Run. Operations that re-post themselves from the
// loop must not keep one turn going either.
func TestPostFloodDoesNotStarveTheLoop(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		for _, how := range []string{"other goroutines", "an op re-posting itself from a goroutine"} {
			t.Run(how, func(t *testing.T) {
				r, err := reactor.New(reactor.Options{Driver: d, OnReport: func(event.Event, string, error) {}})
				if err != nil {
					t.Fatal(err)
				}
				stop := make(chan struct{})
				var wg sync.WaitGroup
				var ran atomic.Int64
				switch how {
				case "other goroutines":
					for range 4 {
						conform.RepeatUntil(&wg, stop, func() { r.Post(func() { ran.Add(1) }) })
					}
				default:
					// An operation that queues another through a helper
					// goroutine's Post would be fair; here the op re-queues
					// itself through the kit's path from the loop, as a
					// Go-driver trigger does: posted from off the loop, each
					// run posts again from off the loop before returning.
					var again func()
					again = func() {
						ran.Add(1)
						select {
						case <-stop:
							return
						default:
						}
						done := make(chan struct{})
						go func() { r.Post(again); close(done) }()
						<-done
					}
					go r.Post(again)
				}
				var stopOnce sync.Once
				halt := func() { stopOnce.Do(func() { close(stop) }) }
				defer func() { halt(); wg.Wait(); r.Close() }()
				once := make(chan struct{})
				go func() {
					defer close(once)
					ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
					defer cancel()
					r.RunOnce(ctx)
				}()
				select {
				case <-once:
				case <-time.After(ownSafety):
					halt()
					<-once
					t.Fatalf("RunOnce under a post flood did not return within %v (%d ops ran)", ownSafety, ran.Load())
				}
				tm, _ := r.NewTimer(time.Millisecond, 0)
				fired := make(chan struct{})
				event.Subscribe(tm, func(_ event.Event, _ any, err error) {
					if err == nil {
						close(fired)
						r.Stop()
					}
				})
				tm.Start()
				runDone := make(chan struct{})
				go func() {
					defer close(runDone)
					ctx, cancel := context.WithTimeout(context.Background(), ownSafety)
					defer cancel()
					r.Run(ctx)
				}()
				select {
				case <-fired:
				case <-time.After(ownSafety):
					t.Errorf("a 1 ms timer never fired under a post flood (%d ops ran)", ran.Load())
				}
				halt()
				<-runDone
			})
		}
	})
}
