package reactor

import (
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"time"
)

// spin waits a random short while without yielding: the other side may
// then be anywhere in put or take, including between take's look at the
// word and gopark's commit on the scheduler's stack.
func spin(rng *rand.Rand) {
	for range rng.IntN(200) {
		_ = rng.Uint32()
	}
}

// A ring of goroutines passes one baton through one signal each, with
// random delays and yields on both sides, so that every put lands in each
// of take's moments: before it, between its look and the commit, and after
// the park. Each hop writes plain memory the next holder reads: a lost
// wake-up hangs (caught by the deadline), a doubled one panics or breaks
// the count, and a write not visible after the take breaks the sum.
func TestSignalRingRandomInterleavings(t *testing.T) {
	for _, locked := range []bool{false, true} {
		const members, hops = 4, 40_000
		sigs := make([]signal, members)
		for i := range sigs {
			sigs[i].init()
		}
		var data [members]int // member i writes data[i] while holding the baton
		total := 0            // written by the holder only
		var wg sync.WaitGroup
		for i := range members {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if locked { // the loop goroutine may be locked to its thread (libuv driver)
					runtime.LockOSThread()
					defer runtime.UnlockOSThread()
				}
				rng := rand.New(rand.NewPCG(uint64(i), 1))
				for {
					if !sigs[i].take() {
						sigs[(i+1)%members].put(false) // pass the end on
						return
					}
					prev := data[(i+members-1)%members]
					total++
					data[i] = total
					if prev != total-1 && total > 1 {
						t.Errorf("member %d: the last holder wrote %d, the count is %d", i, prev, total-1)
					}
					switch rng.IntN(8) {
					case 0:
						runtime.Gosched()
					case 1:
						spin(rng)
					}
					if total == hops {
						sigs[(i+1)%members].put(false)
						return
					}
					sigs[(i+1)%members].put(true)
				}
			}()
		}
		sigs[0].put(true)
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(time.Minute):
			t.Fatalf("locked=%v: the ring hung at %d hops: a wake-up was lost", locked, total)
		}
		if total != hops {
			t.Errorf("locked=%v: %d hops, want %d", locked, total, hops)
		}
	}
}
