package uv_test

import (
	"syscall"
	"testing"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/uv"
)

// KillOnClose terminates a child still running. A child that ended by
// itself and was reaped is not running, also while its completion is
// still on its way to the loop: a Close then (a callback closing the
// Process in the turn before the one that delivers its end) signals
// nothing, and a job the child left in its group runs on, as when the
// completion came first.
func TestProcessKillOnCloseAfterReap(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		defer stop()
		// Grace 0: a terminate would SIGKILL the group at once.
		p := spawnGroup(t, u, "sleep 30 & echo ready; read x", uv.ProcessOptions{KillOnClose: true, Stdin: uv.StdioPipe})
		pgid := p.Pid()
		defer syscall.Kill(-pgid, syscall.SIGKILL)
		uv.UvtMust(t, u.Call(func() {
			// The loop is held: the completion cannot be delivered before
			// the Close below.
			p.Stdin().Close() // the shell reads the end of its input and exits
			select {
			case <-p.Exited():
			case <-time.After(uv.UvtSafety):
				t.Errorf("the shell did not end")
			}
			if p.Flags().Has(event.Closed) {
				t.Errorf("the completion was delivered while the loop was held")
			}
			uv.UvtMust(t, p.Close())
		}))
		// A SIGKILL sent by the Close ends the job within this watch.
		for end := time.Now().Add(200 * time.Millisecond); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
			if members := groupMembers(t, pgid); len(members) != 1 {
				t.Fatalf("the shell ended by itself before the Close, and its group holds %v; want its background job still running", members)
			}
		}
	})
}
