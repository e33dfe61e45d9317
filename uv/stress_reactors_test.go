//go:build stress

package uv_test

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// TestStressManyReactors: reactors made, used and closed in a loop, many
// at once (one per core, and 200), on each driver, each served on its own
// goroutine with a timer and a trigger fired: after every round the
// descriptors and goroutines are back where they were, and the heap after
// the last round is within a few MiB of the heap after the first.
func TestStressManyReactors(t *testing.T) {
	rounds := stressScale(50)
	for _, d := range conform.Drivers {
		if !conform.Available(d) {
			t.Logf("%v driver: not in this build (no cgo)", d)
			continue
		}
		for _, width := range []int{runtime.NumCPU(), 200} {
			base, fds := uv.UvtBaseline(t)
			var firstHeap uint64
			for round := range rounds {
				var wg sync.WaitGroup
				for range width {
					wg.Add(1)
					go func() {
						defer wg.Done()
						manyReactorsOne(t, d)
					}()
				}
				wg.Wait()
				uv.UvtNoLeaks(t, base, fds)
				if round == 0 {
					firstHeap = heapInuse()
				}
			}
			last := heapInuse()
			t.Logf("%v driver, %d reactors at once, %d rounds: heap %d KiB after the first, %d KiB after the last",
				d, width, rounds, firstHeap>>10, last>>10)
			if last > firstHeap+8<<20 {
				t.Errorf("heap grew from %d KiB to %d KiB over %d rounds", firstHeap>>10, last>>10, rounds)
			}
		}
	}
}

func heapInuse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

func manyReactorsOne(t *testing.T, d reactor.Driver) {
	// reactor.New, not UvtNewReactorOn: the helper's cleanup would keep
	// every round's reactors alive until the test ends, which is the heap
	// growth this test measures; each round's UvtNoLeaks checks them instead.
	r, err := reactor.New(reactor.Options{Driver: d})
	if err != nil {
		t.Error(err)
		return
	}
	tr, err := uv.NewTrigger(r)
	if err != nil {
		t.Error(err)
		return
	}
	tm, err := r.NewTimer(time.Millisecond, 0)
	if err != nil {
		t.Error(err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
	defer cancel()
	tr.Start()
	tm.Start()
	tr.Send()
	if err := r.RunOnce(ctx); err != nil {
		t.Error(err)
	}
	if err := r.Close(); err != nil {
		t.Error(err)
	}
	if s := r.Stats(); s.CHandles != 0 || len(s.Handles) != 0 {
		t.Errorf("after Close: %+v", s)
	}
}
