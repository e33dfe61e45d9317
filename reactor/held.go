package reactor

import (
	"fmt"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/waiting"
)

// This file is the reactor's side of internal/waiting.Holder, on its owner
// half (Reactor.Owner): the Go-owned events that no handle, timer or
// closer stands for, which its Close must close all the same (a future
// with subscribers, a channel's operation in line), so that their
// subscribers hear errClosedByClose.

// errClosedByClose is what the subscribers of a held event hear: it
// matches event.ErrClosed, as for any event the reactor's Close closes,
// and ErrReactorClosed, which a waiter on the event expects.
var errClosedByClose = fmt.Errorf("%w by its reactor's Close: %w", event.ErrClosed, ErrReactorClosed)

// Closing returns ErrReactorClosed from the first moment of Close (or
// Shutdown) on, nil before, and ErrZeroReactor for a reactor New did not
// make: constructors and Start refuse with it. Safe from any goroutine.
func (o *owner) Closing() error {
	r := (*Reactor)(o)
	if err := r.usable(); err != nil {
		return err
	}
	if r.closing.Load() {
		return ErrReactorClosed
	}
	return nil
}

// HoldPending makes Close close ev, which has subscribers and nothing of
// the reactor's own to end it. With ownership.
func (o *owner) HoldPending(ev waiting.Pending) {
	r := (*Reactor)(o)
	if r.held == nil {
		r.held = map[waiting.Pending]struct{}{}
	}
	r.held[ev] = struct{}{}
}

// UnholdPending takes back a HoldPending: ev completed, closed, or has
// nobody left to tell. With ownership.
func (o *owner) UnholdPending(ev waiting.Pending) { delete((*Reactor)(o).held, ev) }

// closeHeld closes every held event; Close calls it with ownership. A
// close notification may hold another, which the next round closes.
func (r *Reactor) closeHeld() {
	for len(r.held) > 0 {
		for ev := range r.held {
			delete(r.held, ev)
			r.safely(func() { ev.OwnerClosed(errClosedByClose) })
		}
	}
}
