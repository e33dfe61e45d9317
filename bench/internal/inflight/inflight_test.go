package inflight

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
)

// TestRunCountsAndBound checks that Run makes exactly n calls and never more
// than k at once, and that k calls are reached when the jobs wait for each
// other.
func TestRunCountsAndBound(t *testing.T) {
	tests := []struct{ n, k, wantPeak int }{
		{n: 100, k: 8, wantPeak: 8},
		{n: 3, k: 8, wantPeak: 3},
		{n: 1, k: 1, wantPeak: 1},
	}
	for _, tt := range tests {
		var calls, running, peak atomic.Int64
		// The first wantPeak calls wait until all of them have started, so
		// the peak is reached whatever the scheduling.
		var started sync.WaitGroup
		started.Add(tt.wantPeak)
		err := Run(tt.n, tt.k, func() error {
			c := calls.Add(1)
			r := running.Add(1)
			for p := peak.Load(); r > p && !peak.CompareAndSwap(p, r); p = peak.Load() {
			}
			if c <= int64(tt.wantPeak) {
				started.Done()
				started.Wait()
			}
			running.Add(-1)
			return nil
		})
		if err != nil {
			t.Errorf("Run(%d, %d) = %v, want nil", tt.n, tt.k, err)
		}
		if calls.Load() != int64(tt.n) || peak.Load() != int64(tt.wantPeak) {
			t.Errorf("Run(%d, %d): %d calls, at most %d at once; want %d and %d",
				tt.n, tt.k, calls.Load(), peak.Load(), tt.n, tt.wantPeak)
		}
	}
}

func TestRunStopsOnError(t *testing.T) {
	boom := errors.New("boom")
	var calls atomic.Int64
	err := Run(1000, 1, func() error {
		if calls.Add(1) == 5 {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) || calls.Load() != 5 {
		t.Errorf("Run = %v after %d calls, want boom after 5", err, calls.Load())
	}
}

func TestRunPanicsOnBadCounts(t *testing.T) {
	for _, nk := range [][2]int{{0, 1}, {1, 0}, {-1, 4}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Run(%d, %d) did not panic", nk[0], nk[1])
				}
			}()
			Run(nk[0], nk[1], func() error { return nil })
		}()
	}
}
