package uv

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/uvevent/uvevent/reactor"
)

// TestTakeQueueStorm drives a serving takeQueue as the listener does, with
// a producer that stands for the loop: it hands results one by one to
// waits whose contexts end at random moments (before the wait, while it
// waits, or never), stops once the queue reaches its limit (atLimit), and
// goes on only when a take brought the queue below it (drained), as
// onAccept and unstall do. Whatever the interleaving, every result is
// taken by exactly one wait, or is left queued for close; a wait returns
// either a result with a nil error, or an error and no result (never
// both, never neither); every wait ends (ErrClosed after close), the
// list of waits is empty at the end, the queue never holds more than its
// limit, and the producer is never left stopped with the queue below it
// (a drained lost: the producer would wait to the safety deadline).
func TestTakeQueueStorm(t *testing.T) {
	u := UvtNewReactorOn(t, reactor.DriverAuto)
	self, err := NewTrigger(u.Reactor) // only its flags are read: not closed
	UvtMust(t, err)
	defer func() {
		self.Close()
		UvtShutdown(t, u, false)
	}()
	for round, limit := range []int{1, 2, 3, 8} {
		const results, waiters = 3000, 6
		drains := make(chan struct{}, results)
		h := &takeQueue[int]{serving: true, limit: limit, drained: func() { drains <- struct{}{} }}

		var mu sync.Mutex
		taken := make([]int, results+1) // by result, how many waits took it
		var wrong []string
		var wg sync.WaitGroup
		for i := range waiters {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rng := rand.New(rand.NewPCG(uint64(round), uint64(i)))
				for {
					ctx, cancel := context.WithCancel(context.Background())
					switch rng.IntN(4) {
					case 0:
						cancel() // ended before the wait
					case 1:
						time.AfterFunc(time.Duration(rng.IntN(50))*time.Microsecond, cancel)
					}
					v, err := h.wait(ctx, nil, self, nil)
					cancel()
					mu.Lock()
					switch {
					case err == nil && v > 0:
						taken[v]++
					case errors.Is(err, context.Canceled) && v == 0:
					case errors.Is(err, ErrClosed) && v == 0:
						mu.Unlock()
						return
					default:
						wrong = append(wrong, fmt.Sprintf("a wait returned %d with %v", v, err))
					}
					mu.Unlock()
				}
			}()
		}

		// The producer: the loop's side.
		maxQueued := 0
		stalled := false
		for v := 1; v <= results; v++ {
			for stalled {
				UvtRecv(t, drains, "a take to drain a full queue")
				stalled = false // unstall
			}
			if !h.hand(v, nil) {
				t.Fatalf("hand(%d) = false before close", v)
			}
			h.mu.Lock()
			maxQueued = max(maxQueued, len(h.queue))
			h.mu.Unlock()
			if !stalled && h.atLimit() {
				stalled = true
			}
			// An unstall posted meanwhile runs before the next
			// result, as a Post does on the loop.
			select {
			case <-drains:
				stalled = false
			default:
			}
		}
		left := h.close()
		wg.Wait()

		for _, v := range left {
			taken[v]++
		}
		var notOnce []int
		for v := 1; v <= results; v++ {
			if taken[v] != 1 {
				notOnce = append(notOnce, v)
			}
		}
		if len(notOnce) > 0 {
			t.Errorf("limit %d: results not taken exactly once (taken or left queued at close): %v", limit, notOnce)
		}
		if len(wrong) > 0 {
			t.Errorf("limit %d: %d waits returned neither a result nor an error alone, e.g. %s", limit, len(wrong), wrong[0])
		}
		if maxQueued > limit {
			t.Errorf("limit %d: the queue held %d results with the producer stopped at the limit", limit, maxQueued)
		}
		h.mu.Lock()
		if diff := cmp.Diff(0, len(h.waiters)); diff != "" {
			t.Errorf("limit %d: waits left on the list after close (-want +got):\n%s", limit, diff)
		}
		h.mu.Unlock()
	}
}

// TestTakeQueueWithdrawnWaitKeepsNothing: a wait whose context ends leaves
// the list, and the list's array does not keep it; the next result goes
// to the wait behind it, and a wait coming later takes the queue first.
func TestTakeQueueWithdrawnWaitKeepsNothing(t *testing.T) {
	u := UvtNewReactorOn(t, reactor.DriverAuto)
	self, err := NewTrigger(u.Reactor)
	UvtMust(t, err)
	defer func() {
		self.Close()
		UvtShutdown(t, u, false)
	}()
	h := &takeQueue[int]{serving: true}
	waiting := func(n int) func() bool {
		return func() bool {
			h.mu.Lock()
			defer h.mu.Unlock()
			return len(h.waiters) == n
		}
	}
	type got struct {
		v   int
		err error
	}
	first, cancelFirst := context.WithCancel(context.Background())
	firstGot := make(chan got, 1)
	go func() {
		v, err := h.wait(first, nil, self, nil)
		firstGot <- got{v, err}
	}()
	UvtWaitFor(t, "the first wait", waiting(1))
	secondGot := make(chan got, 1)
	go func() {
		v, err := h.wait(context.Background(), nil, self, nil)
		secondGot <- got{v, err}
	}()
	UvtWaitFor(t, "the second wait", waiting(2))
	cancelFirst()
	if g := UvtRecv(t, firstGot, "the withdrawn wait"); g.v != 0 || !errors.Is(g.err, context.Canceled) {
		t.Errorf("withdrawn wait = %d, %v; want 0, context.Canceled", g.v, g.err)
	}
	h.mu.Lock()
	if n, c := len(h.waiters), cap(h.waiters); n != 1 || c < 2 || h.waiters[:c][1] != nil {
		t.Errorf("after the withdrawal the list holds %d waits, and its array behind them %v; want 1, and nil", n, h.waiters[:c][n:])
	}
	h.mu.Unlock()
	h.hand(7, nil)
	if g := UvtRecv(t, secondGot, "the second wait"); g.v != 7 || g.err != nil {
		t.Errorf("the wait behind the withdrawn one = %d, %v; want 7, nil", g.v, g.err)
	}
	h.hand(8, nil)
	h.hand(9, nil)
	if v, err := h.wait(context.Background(), nil, self, nil); v != 8 || err != nil {
		t.Errorf("a wait with two queued = %d, %v; want the older, 8", v, err)
	}
	if q := h.close(); !cmp.Equal(q, []int{9}) {
		t.Errorf("close returned %v, want [9]", q)
	}
	if v, err := h.wait(context.Background(), nil, self, nil); v != 0 || !errors.Is(err, ErrClosed) {
		t.Errorf("a wait after close = %d, %v; want ErrClosed", v, err)
	}
}
