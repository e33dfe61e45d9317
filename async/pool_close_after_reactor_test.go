package async_test

import (
	"errors"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/uvevent/uvevent/async"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
)

// A pool closed after its reactor still destroys its idle resources (a
// connection pool's Close, deferred after the reactor's Close or run once
// a Shutdown is over, closes its connections) and says nil, as any Close
// of the pool does; closing it again, from several goroutines at once,
// destroys nothing twice.
func TestPoolCloseAfterReactorClose(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		r := quietReactor(t, d)
		var l ledger
		p := countedPool(t, r, 2, &l)
		ctx, stop := serve(t, r)
		releaseAll(t, p, acquireN(ctx, t, p, 2))
		stop()
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := p.Close(); err != nil {
					t.Errorf("the pool's Close after the reactor's: %v, want nil", err)
				}
			}()
		}
		wg.Wait()
		if diff := cmp.Diff([]int{1, 2}, l.Destroyed()); diff != "" {
			t.Errorf("destroyed (-want +got):\n%s", diff)
		}
	})
}

// A resource released or discarded after the reactor's Close is destroyed
// (the pool is closed with its reactor) and nil is said, as for a pool
// closed by its own Close: a handler's deferred Release, whose error is
// rarely read, leaves no connection open when the reactor closes under it.
// A value the pool never lent is still refused.
func TestPoolReleaseAfterReactorClose(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		r := quietReactor(t, d)
		var l ledger
		p := countedPool(t, r, 3, &l)
		ctx, stop := serve(t, r)
		lent := acquireN(ctx, t, p, 3)
		releaseAll(t, p, lent[2:])
		stop()
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		if err := p.Release(lent[0]); err != nil {
			t.Errorf("Release after the reactor's Close: %v, want nil", err)
		}
		if err := p.Discard(lent[1]); err != nil {
			t.Errorf("Discard after the reactor's Close: %v, want nil", err)
		}
		if err := p.Release(99); !errors.Is(err, async.ErrNotAcquired) {
			t.Errorf("Release of a value never lent, after the reactor's Close: %v, want ErrNotAcquired", err)
		}
		if diff := cmp.Diff([]int{1, 2, 3}, l.Destroyed()); diff != "" {
			t.Errorf("destroyed (-want +got):\n%s", diff)
		}
	})
}
