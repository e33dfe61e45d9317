package async_test

import (
	"fmt"
	"runtime"
	"testing"
	"time"
	"weak"

	"github.com/uvevent/uvevent/async"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
)

// A pool dropped without Close whose health check runs often (every
// millisecond, the loop turning for it) is collected all the same, and
// its hidden timer leaves the reactor: no timer is left queued. A weak
// pointer says when the pool is gone.
func TestPoolDroppedWithFastHealthCheck(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		r := quietReactor(t, d)
		var l ledger
		before := r.Stats().Timers
		ctx, stop := serve(t, r) // the loop turns for the check while the pool is dropped
		defer stop()
		w := func() weak.Pointer[async.Pool[int]] {
			p, err := async.NewPool(r, async.PoolOptions[int]{
				Max: 2, New: l.New, Destroy: l.Destroy,
				Healthy: func(int) bool { return true }, CheckEvery: time.Millisecond,
			})
			if err != nil {
				t.Fatal(err)
			}
			releaseAll(t, p, acquireN(ctx, t, p, 2))
			return weak.Make(p)
		}()
		if got := r.Stats().Timers; got != before+1 {
			t.Fatalf("%d timers with the pool, want %d", got, before+1)
		}
		collectUntil(t, nil, func() bool { return w.Value() == nil && r.Stats().Timers == before }, func() string {
			return fmt.Sprintf("pool collected: %v; %d timers, want %d", w.Value() == nil, r.Stats().Timers, before)
		})
		runtime.GC()
		if n := len(l.Destroyed()); n != 2 {
			t.Errorf("%d idle resources destroyed, want 2", n)
		}
	})
}
