package uv_test

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/uv"
)

// KillOnClose terminates a child still running when the event is closed,
// as a Command's Close does; a child that ends by itself is closed by
// nobody: its completion signals nothing, and a job it left in its group
// (a shell's background command) runs on, as without KillOnClose.
func TestProcessKillOnCloseCompletionSignalsNothing(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		defer stop()
		// Grace 0: a terminate would SIGKILL the group at once.
		p := spawnGroup(t, u, "sleep 30 & echo ready", uv.ProcessOptions{KillOnClose: true})
		pgid := p.Pid()
		defer syscall.Kill(-pgid, syscall.SIGKILL)
		ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
		defer cancel()
		if _, err := event.Await(ctx, event.Any(), p); err != nil {
			t.Fatalf("the shell's end: %v", err)
		}
		// The completion's pass is over, and with it whatever it signals.
		uv.UvtMust(t, u.Call(func() {}))
		// A SIGKILL sent then ends the job within this watch.
		for end := time.Now().Add(200 * time.Millisecond); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
			if members := groupMembers(t, pgid); len(members) != 1 {
				t.Fatalf("the shell ended by itself, and its group holds %v; want its background job still running", members)
			}
		}
	})
}
