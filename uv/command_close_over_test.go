package uv_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/uv"
)

// A Command is over once Exited is closed (the shell reaped, its output at
// its end), also while its completion is still on its way to the loop: a
// Close then (a callback closing it in the turn before the one that
// delivers its end) terminates nothing, and a job the shell left in its
// group, away from the output, runs on, as when the completion came first.
func TestCommandCloseAfterOver(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		defer stop()
		fifo := filepath.Join(t.TempDir(), "go")
		uv.UvtMust(t, syscall.Mkfifo(fifo, 0o600))
		e, err := uv.NewCommand(u.Reactor, "sleep 30 >/dev/null 2>&1 & echo $$; read x < "+fifo, uv.CommandOptions{Grace: time.Millisecond})
		uv.UvtMust(t, err)
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0) // the shell has opened it
		uv.UvtMust(t, err)
		pgid := e.Pid()
		defer syscall.Kill(-pgid, syscall.SIGKILL)
		uv.UvtWaitFor(t, "the background job", func() bool { return len(groupMembers(t, pgid)) == 2 })
		uv.UvtMust(t, u.Call(func() {
			// The loop is held: the completion cannot be delivered before
			// the Close below.
			w.Close() // the shell reads the end of the fifo and exits
			select {
			case <-e.Exited():
			case <-time.After(uv.UvtSafety):
				t.Errorf("the command did not end")
			}
			if e.Flags().Has(event.Closed) {
				t.Errorf("the completion was delivered while the loop was held")
			}
			uv.UvtMust(t, e.Close())
		}))
		for end := time.Now().Add(200 * time.Millisecond); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
			if members := groupMembers(t, pgid); len(members) != 1 {
				t.Fatalf("the command was over before the Close, and its group holds %v; want its background job still running", members)
			}
		}
	})
}
