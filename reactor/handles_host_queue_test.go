package reactor_test

import (
	"context"
	"errors"
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

// kind.Host.PostOwned queues work for the goroutine owning the loop, which
// runs it before it lets the loop go, and never runs it in the caller:
// with nobody owning the loop it reports false and does nothing (where
// Post would run the work in the caller); once the reactor is closed it
// fails.
func TestHostPostOwnedNeverRunsInTheCaller(t *testing.T) {
	forEachDriver(t, func(t *testing.T, r *reactor.Reactor) {
		host := kind.HostOf(r.Owner())
		ran := false
		if queued, err := host.PostOwned(func() { ran = true }); queued || err != nil || ran {
			t.Fatalf("PostOwned with nobody owning the loop = %v, %v (ran: %v); want false, nil, not run", queued, err, ran)
		}
		ranOnOwner := make(chan bool, 1)
		if err := r.Call(func() { // a direct operation owns the loop meanwhile
			type posted struct {
				queued bool
				err    error
			}
			res := make(chan posted)
			go func() {
				q, err := host.PostOwned(func() { ranOnOwner <- r.Owner().Owned() })
				res <- posted{q, err}
			}()
			if p := <-res; !p.queued || p.err != nil {
				t.Errorf("PostOwned while the loop is owned = %v, %v; want true, nil", p.queued, p.err)
			}
			if len(ranOnOwner) != 0 {
				t.Errorf("the work ran before the owner let the loop go")
			}
		}); err != nil {
			t.Fatal(err)
		}
		select {
		case owned := <-ranOnOwner:
			if !owned {
				t.Errorf("the work ran without ownership of the loop")
			}
		default:
			t.Errorf("the owner let the loop go without running the work")
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		if queued, err := host.PostOwned(func() {}); queued || !errors.Is(err, reactor.ErrReactorClosed) {
			t.Errorf("PostOwned after Close = %v, %v; want false, ErrReactorClosed", queued, err)
		}
	})
}
