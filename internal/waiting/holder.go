package waiting

// Holder is implemented by owners that close, when they shut down, the
// Go-owned events they know of only through this contract: a future with
// subscribers and nobody to complete it yet, a channel's operation waiting
// in line. Their subscribers then hear an error matching event.ErrClosed
// (and the owner's own, reactor.ErrReactorClosed) at the owner's Close
// instead of waiting for ever, as the subscribers of its other events do. Package event and package async check an owner against it.
type Holder interface {
	// Closing returns the owner's error (reactor.ErrReactorClosed) from the
	// first moment of its Close on, nil before: a constructor and a Start
	// refuse with it. Safe from any goroutine.
	Closing() error
	// HoldPending adds ev to the events the owner closes at its Close
	// (one added during that Close is closed too); UnholdPending takes it
	// out again (the event completed, closed, or has nobody left to
	// tell). The owner holds ev strongly until then, as it holds any
	// active event. With the owner held.
	HoldPending(ev Pending)
	UnholdPending(ev Pending)
}

// Pending is an event as a Holder keeps it (its kind's Ops): OwnerClosed
// closes it, with the owner held, its subscribers hearing why, and takes
// it out of the holder.
type Pending interface{ OwnerClosed(why error) }
