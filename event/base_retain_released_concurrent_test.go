package event_test

import (
	"errors"
	"sync"
	"testing"

	"github.com/uvevent/uvevent/event"
)

// Retains after the last Dispose from many goroutines at once: each is
// reported to the Serial's ReportFunc inside one of its operations (the
// Serial held), as every report is, so a ReportFunc that trusts its owner's
// lock needs none of its own (-race).
func TestRetainReleasedReportedUnderSerial(t *testing.T) {
	var s event.Serial
	var n, outside int // touched by ReportFunc only
	s.ReportFunc = func(_ event.Event, _ string, err error) {
		if !s.Owned() {
			outside++
		}
		if errors.Is(err, event.ErrReleased) {
			n++
		}
	}
	f := event.NewFuture[int](&s)
	f.Dispose() // the creator's, the last
	const goroutines = 8
	var wg sync.WaitGroup
	for range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f.Retain()
		}()
	}
	wg.Wait()
	if n != goroutines || outside != 0 {
		t.Errorf("reports: %d of ErrReleased (want %d), %d made outside the Serial (want 0)", n, goroutines, outside)
	}
}
