package reactor_test

import (
	"context"
	"testing"

	"github.com/uvevent/uvevent/internal/kind"
	"github.com/uvevent/uvevent/reactor"
)

// kind.Host.Queue's work runs in a loop turn, never in another goroutine's
// Call or Post on a loop nobody runs (as libuv delivers only inside
// uv_run), and runs at Close when no turn came; Queue refuses once Close
// has begun.
func TestHostQueueRunsOnlyInATurnOrAtClose(t *testing.T) {
	forEachDriver(t, func(t *testing.T, r *reactor.Reactor) {
		host := kind.HostOf(r.Owner())
		ran := 0
		if err := host.Queue(func() { ran++ }); err != nil {
			t.Fatal(err)
		}
		if err := r.Call(func() {}); err != nil { // takes the loop nobody runs, and lets it go
			t.Fatal(err)
		}
		if err := r.Post(func() {}); err != nil {
			t.Fatal(err)
		}
		got := -1
		r.Call(func() { got = ran })
		if got != 0 {
			t.Fatalf("queued work ran %d times outside a turn, want 0", got)
		}
		if err := r.RunOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
		r.Call(func() { got = ran })
		if got != 1 {
			t.Fatalf("after a turn the queued work ran %d times, want 1", got)
		}
		atClose := false
		host.Queue(func() { atClose = true })
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		if !atClose {
			t.Errorf("work queued and never turned did not run at Close")
		}
		if err := host.Queue(func() {}); err == nil {
			t.Errorf("Queue after Close = nil, want an error")
		}
	})
}
