package async_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/uvevent/uvevent/async"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
)

// A pool with a health check, dropped without Close, lets its hidden
// timer go: the loop no longer turns every CheckEvery for a pool nobody
// can reach.
func TestPoolDroppedStopsHealthCheck(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		r := quietReactor(t, d)
		before := r.Stats().Timers
		func() {
			p, err := async.NewPool(r, async.PoolOptions[int]{
				New:        func(context.Context) (int, error) { return 1, nil },
				Max:        1,
				Healthy:    func(int) bool { return true },
				CheckEvery: time.Millisecond,
			})
			if err != nil {
				t.Fatal(err)
			}
			if got := r.Stats().Timers; got != before+1 {
				t.Fatalf("a pool with a health check queues %d timers, want %d", got-before, 1)
			}
			_ = p
		}()
		collectUntil(t, r, func() bool { return r.Stats().Timers == before }, func() string {
			return fmt.Sprintf("a dropped pool's health-check timer is still queued (%d timers)", r.Stats().Timers)
		})
	})
}
