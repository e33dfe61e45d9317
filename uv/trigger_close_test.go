package uv_test

import (
	"errors"
	"sync"
	"testing"

	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// Triggers created while Close runs are either refused or closed by it:
// Close succeeds and no C handle is left.
func TestCloseWhileTriggersAreCreated(t *testing.T) {
	uv.UvtNeedsLibuv(t)
	for round := range 50 {
		r := uv.UvtNewReactor(t).Reactor
		var wg sync.WaitGroup
		start := make(chan struct{})
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				for {
					if _, err := uv.NewTrigger(r); err != nil {
						if !errors.Is(err, reactor.ErrReactorClosed) {
							t.Errorf("NewTrigger during Close: %v", err)
						}
						return
					}
				}
			}()
		}
		close(start)
		if err := r.Close(); err != nil {
			t.Fatalf("round %d: Close = %v", round, err)
		}
		wg.Wait()
		if s := r.Stats(); s.CHandles != 0 || len(s.Handles) != 0 {
			t.Fatalf("round %d: left after Close: %+v", round, s)
		}
	}
}
