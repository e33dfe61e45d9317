package reactor_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
)

// Timers that all have the same timeout fire in the order they were last
// started, whatever the clock does: a later start is never due earlier,
// and equal deadlines keep start order. So thousands of them, stopped,
// reset, restarted and closed at random from one another's callbacks (the
// timers of the firing one's own millisecond among them), must fire exactly
// as a FIFO list says: each start appends, each stop or close takes out.
// Thousands started in one go share milliseconds, filling slots past their
// first chunks.
func TestTimerAttackFIFO(t *testing.T) {
	for _, timeout := range []time.Duration{0, time.Millisecond, 3 * time.Millisecond} {
		t.Run(fmt.Sprint("timeout=", timeout), func(t *testing.T) {
			conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
				for seed := uint64(1); seed <= 3 && !t.Failed(); seed++ {
					runTimerFIFO(t, d, seed, timeout)
				}
			})
		})
	}
}

func runTimerFIFO(t *testing.T, d reactor.Driver, seed uint64, timeout time.Duration) {
	const n = 3000
	r := newOwnReactor(t, d)
	rng := rand.New(rand.NewPCG(seed, 0xf1f0))
	timers := make([]*reactor.Timer, n)
	closed := make([]bool, n)
	var queue, fired, want []int // queue: the model, started timers in firing order
	take := func(j int) {
		if k := slices.Index(queue, j); k >= 0 {
			queue = slices.Delete(queue, k, k+1)
		}
	}
	budget := 4 * n // restarts allowed from callbacks, so that the run ends
	for i := range timers {
		tm, err := r.NewTimer(timeout, 0)
		if err != nil {
			t.Fatal(err)
		}
		timers[i] = tm
		event.Subscribe(tm, func(_ event.Event, _ any, err error) {
			if err != nil {
				return // closed
			}
			fired = append(fired, i)
			if len(queue) == 0 || queue[0] != i {
				t.Errorf("seed %d: timer %d fired, the model's next is %v", seed, i, queue[:min(len(queue), 1)])
			} else {
				want = append(want, i)
			}
			take(i)
			for range rng.IntN(4) {
				j := rng.IntN(n)
				if closed[j] {
					continue
				}
				switch op := rng.IntN(8); {
				case op < 2:
					timers[j].Stop()
					take(j)
				case op < 5 && budget > 0:
					budget--
					if err := timers[j].Reset(timeout); err != nil {
						t.Errorf("Reset(%d): %v", j, err)
					}
					take(j)
					queue = append(queue, j)
				case op == 5 && budget > 0 && event.StateOf(timers[i]) == event.Stopped:
					budget--
					if err := timers[i].Start(); err != nil { // itself, again
						t.Errorf("Start(%d) from its callback: %v", i, err)
					}
					queue = append(queue, i)
				case op == 6:
					timers[j].Close()
					closed[j] = true
					take(j)
				case op == 7 && len(queue) > 0: // the next due, likely in the slot being fired
					k := queue[0]
					timers[k].Stop()
					take(k)
				}
			}
		})
	}
	for i, tm := range timers {
		if err := tm.Start(); err != nil {
			t.Fatal(err)
		}
		queue = append(queue, i)
	}
	runIdle(t, r)
	if len(queue) != 0 {
		t.Errorf("seed %d: %d timers never fired, first %v", seed, len(queue), queue[:min(len(queue), 5)])
	}
	if diff := cmp.Diff(want, fired); diff != "" && !t.Failed() {
		t.Errorf("seed %d: fired (-FIFO +got):\n%s", seed, diff)
	}
	if len(fired) < n/2 {
		t.Errorf("seed %d: only %d firings of %d timers", seed, len(fired), n)
	}
	t.Logf("seed %d: %d firings", seed, len(fired))
	if s := r.Stats(); s.Timers != 0 {
		t.Errorf("seed %d: %d timers still queued", seed, s.Timers)
	}
	for i, tm := range timers {
		if closed[i] {
			if err := tm.Reset(timeout); !errors.Is(err, event.ErrClosed) {
				t.Errorf("Reset of closed timer %d = %v, want ErrClosed", i, err)
			}
		}
	}
}
