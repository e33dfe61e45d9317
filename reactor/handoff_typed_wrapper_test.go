package reactor_test

import (
	"context"
	"testing"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
)

// mailbox is a program's own typed event over a handoff: embedding
// *event.Handoff[int] makes it an event.Typed[int], which AwaitValue takes.
type mailbox struct {
	*event.Handoff[int]
}

// A coroutine that waits on a handoff through a type of the program's that
// embeds it gets the value handed over, whether the value comes after it
// parked (handed straight to its wait) or before (taken by its replay), and
// the handoff is empty and takes the next value afterwards, on either
// driver. The fast path leaves such a value in the handoff for the wait to
// read (noResult); awaitValue must read it there whatever type carries the
// handoff, not only a *Handoff[T].
func TestHandoffAwaitedThroughAnEmbeddingType(t *testing.T) {
	for _, c := range []struct {
		name         string
		resolveFirst bool
	}{{"parked first", false}, {"resolved first", true}} {
		t.Run(c.name, func(t *testing.T) {
			forEachDriver(t, func(t *testing.T, r *reactor.Reactor) {
				ctx := runCtx(t)
				h := newHandoff[int](t, r)
				box := mailbox{h}
				if c.resolveFirst {
					if err := h.Resolve(1); err != nil {
						t.Fatal(err)
					}
				}
				waiter, _ := reactor.Spawn(ctx, r, func(ctx context.Context) (int, error) {
					return event.AwaitValue[int](ctx, box)
				})
				if !c.resolveFirst {
					reactor.Spawn(ctx, r, func(ctx context.Context) (int, error) {
						return 0, h.Resolve(1) // the waiter parked first
					})
				}
				if err := r.Run(ctx); err != nil {
					t.Fatal(err)
				}
				if v, ok, err := waiter.Outcome(); v != 1 || !ok || err != nil {
					t.Errorf("waiter through the embedding type = %d, %t, %v; want 1, true, nil", v, ok, err)
				}
				if err := h.Resolve(2); err != nil {
					t.Errorf("Resolve once the value was awaited = %v, want nil (the handoff still holds the first)", err)
				}
			})
		})
	}
}
