package reactor

import (
	"errors"
	"sync"
	"testing"

	"github.com/uvevent/uvevent/event"
)

// After Close, reports come from whichever goroutine makes them (the
// collector's cleanups of failed futures): OnReport still gets them one at
// a time. Its state here has no lock of its own, so an overlap is a race
// the detector sees (run with -race), and is counted besides. A report
// made inside OnReport goes through at once.
func TestOnReportCallsDoNotOverlap(t *testing.T) {
	newOnEachDriver(t, func(t *testing.T, r *Reactor) {
		var (
			inside, overlaps int
			got              []string
		)
		r.opts.OnReport = func(_ event.Event, msg string, _ error) {
			inside++
			if inside > 1 {
				overlaps++
			}
			got = append(got, msg)
			inside--
			if msg == "outer" {
				r.report(nil, "nested", nil) // on this goroutine, inside its OnReport
			}
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		const goroutines, each = 8, 200
		var wg sync.WaitGroup
		for range goroutines {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range each {
					r.report(nil, "late", errors.New("failed after Close"))
				}
			}()
		}
		wg.Wait()
		r.report(nil, "outer", nil)
		if overlaps != 0 || len(got) != goroutines*each+2 || got[len(got)-1] != "nested" {
			t.Errorf("%d reports, %d overlapping, last %q; want %d, none, the nested one last",
				len(got), overlaps, got[len(got)-1], goroutines*each+2)
		}
	})
}
