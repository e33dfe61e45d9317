package async_test

import (
	"context"
	"errors"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
	"weak"

	"github.com/uvevent/uvevent/async"
	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
)

// A pool dropped while its reactor is closing passes its idle resources
// to Destroy on the loop or once the Close is over, never while the Close
// still runs callbacks on the loop: Destroy may share what those
// callbacks touch, as the docs promise it runs on the loop. Here a
// subscriber told of the Close (a held future's) collects the dropped
// pool and looks for Destroy while it runs; Destroy must come, after.
func TestPoolDroppedDuringReactorClose(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		r, err := reactor.New(reactor.Options{Driver: d, OnReport: func(event.Event, string, error) {}})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		var inCallback, duringCallback atomic.Bool
		destroyed := make(chan int, 1)
		gone := func() weak.Pointer[async.Pool[int]] {
			p, err := async.NewPool(r, async.PoolOptions[int]{
				Max: 1,
				New: func(context.Context) (int, error) { return 7, nil },
				Destroy: func(v int) {
					if inCallback.Load() {
						duringCallback.Store(true)
					}
					destroyed <- v
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			go r.Serve(ctx)
			v, err := p.Acquire().Await(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := p.Release(v); err != nil {
				t.Fatal(err)
			}
			cancel()
			for r.Stats().Running {
				runtime.Gosched()
			}
			return weak.Make(p)
		}()
		f := event.NewFuture[int](r.Owner())
		told := make(chan error, 1)
		if _, err := event.Subscribe(f, func(_ event.Event, _ any, err error) {
			inCallback.Store(true)
			defer inCallback.Store(false)
			deadline := time.Now().Add(20 * time.Second)
			for gone.Value() != nil && time.Now().Before(deadline) {
				runtime.GC()
			}
			// The pool is collected and its cleanup queued: a Destroy off
			// the loop comes now, while this callback runs.
			select {
			case <-destroyed:
				destroyed <- 7
			case <-time.After(500 * time.Millisecond):
			}
			told <- err
		}); err != nil {
			t.Fatal(err)
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		if err := <-told; !errors.Is(err, reactor.ErrReactorClosed) {
			t.Errorf("the future's subscriber heard %v, want ErrReactorClosed", err)
		}
		select {
		case v := <-destroyed:
			if v != 7 {
				t.Errorf("Destroy(%d), want Destroy(7)", v)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("the dropped pool's idle resource was never destroyed")
		}
		if duringCallback.Load() {
			t.Error("Destroy ran off the loop while the reactor's Close was running a callback")
		}
	})
}
