package event

import (
	"errors"
	"log/slog"
	"runtime/debug"

	"github.com/uvevent/uvevent/refcount"
)

// CallbackFunc receives an event's notification: the event that fired, its
// result, and its error. It runs on the event's loop goroutine and must not
// block (see the package documentation).
type CallbackFunc func(ev Event, result any, err error)

// A Callback is a reference-counted subscriber. One Callback may sit in the
// vectors of many events at once (a waker waiting on several events uses one
// callback for all of them); each vector holds a reference, and the dispose
// function runs once, when the last holder lets go.
//
// NewCallback returns a callback holding one reference, the creator's, which
// the creator gives up with Release once the callback is subscribed where it
// needs to be.
type Callback struct {
	refs    refcount.Count
	pinned  bool    // not counted: its holder outlives every subscription (a wait's own callback)
	blind   bool    // it reads a future's value itself: the future may pass noResult
	wait    bool    // a wait's own: the owner's Close ends the wait itself (no hold, see subscribedOps)
	park    *parked // the fast-path wait (await_one.go) whose callback this is, nil for any other
	fn      CallbackFunc
	dispose func()
}

// NewCallback returns a callback that calls fn, holding the creator's
// reference. A callback made from a nil fn is refused by every event
// (ErrNilCallback) rather than failing when it would be called.
func NewCallback(fn CallbackFunc) *Callback {
	return &Callback{fn: fn}
}

// OnDispose sets a function run once when the last reference is released.
// It must be set before the callback is shared.
func (c *Callback) OnDispose(f func()) *Callback {
	if c == nil {
		return nil
	}
	c.dispose = f
	return c
}

// Retain adds a reference. Retaining a callback after its last Release is
// a bug in the program: it does nothing and is logged (log/slog's default
// logger: a callback has no owner) with an error matching ErrReleased that
// names the calling line, never a panic (see Base.Retain).
func (c *Callback) Retain() {
	if c != nil && !c.refs.TryRetain() {
		LogReport(slog.Default(), nil, "Callback.Retain after its last Release", misuse("Retain"))
	}
}

// hold is an event's Retain: none for a pinned callback. It reports false
// for a released callback, which the event refuses.
func (c *Callback) hold() bool {
	return c.pinned || c.refs.TryRetain()
}

// Release drops a reference; the last one runs the dispose function. A
// panic in the dispose function is recovered, never raised: released by an
// event, it is reported to the event's owner; released here, it is logged
// (log/slog's default logger). A Release after the last one is logged too,
// as Retain's is, and does nothing.
func (c *Callback) Release() {
	switch err := c.release(); {
	case errors.Is(err, ErrReleased):
		LogReport(slog.Default(), nil, "Callback.Release after its last Release", misuse("Release"))
	case err != nil:
		LogReport(slog.Default(), nil, "callback's OnDispose panicked", err)
	}
}

// release is Release returning a panic of the dispose function as a
// *PanicError, and ErrReleased when no reference was left to drop.
func (c *Callback) release() (err error) {
	if c == nil || c.pinned {
		return nil
	}
	last, ok := c.refs.TryRelease()
	if !ok {
		return ErrReleased
	}
	if !last || c.dispose == nil {
		return nil
	}
	defer func() {
		if p := recover(); p != nil {
			err = &PanicError{Value: p, Stack: debug.Stack()}
		}
	}()
	c.dispose()
	return nil
}

// usable reports whether c can be subscribed: not nil, with a function.
func (c *Callback) usable() bool { return c != nil && c.fn != nil }

// Refs returns the number of references held now.
func (c *Callback) Refs() int {
	if c == nil {
		return 0
	}
	return c.refs.Load()
}

// call runs one callback, recovering and reporting a panic so that the loop
// and the rest of the pass go on.
func (b *Base) call(ev Event, cb *Callback, result any, err error) {
	defer func() {
		if p := recover(); p != nil {
			report(b.owner(), ev, "callback panicked", &PanicError{Value: p, Stack: debug.Stack()})
		}
	}()
	cb.fn(ev, result, err)
}
