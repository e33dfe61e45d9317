package uv_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/uv"
)

// Retain on a kind whose references are all gone (its last Dispose closed
// it) does nothing and is reported to the reactor's handler, naming the
// line; the program and the reactor go on. Both drivers.
func TestRetainAfterLastDisposeReported(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		tr := uv.UvtNewTrigger(t, u)
		tr.Dispose() // the creator's reference, the last: the trigger closes
		tr.Retain()
		tr.Dispose()
		reps := u.Reports()
		if len(reps) != 1 || !errors.Is(reps[0].Err, event.ErrReleased) {
			t.Fatalf("reports = %v, want one matching event.ErrReleased", reps)
		}
		if !strings.Contains(reps[0].Err.Error(), "handle_retain_released_test.go:") {
			t.Errorf("report %v does not name the line of the Retain", reps[0])
		}
		other := uv.UvtNewTrigger(t, u)
		uv.UvtMust(t, other.Start())
		uv.UvtMust(t, other.Send())
		uv.UvtTurnUntil(t, u, "a trigger after the refused Retain", func() bool {
			_, fired := uv.UvtInfoCounts(t, other)
			return fired > 0
		})
		other.Close()
		uv.UvtShutdown(t, u, true)
	})
}
