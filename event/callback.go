package event

import "github.com/uvevent/uvevent/refcount"

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
	c.dispose = f
	return c
}

// Retain adds a reference.
func (c *Callback) Retain() { c.refs.Retain() }

// Release drops a reference; the last one runs the dispose function.
func (c *Callback) Release() {
	if c.refs.Release() && c.dispose != nil {
		c.dispose()
	}
}

// usable reports whether c can be subscribed: not nil, with a function.
func (c *Callback) usable() bool { return c != nil && c.fn != nil }

// Refs returns the number of references held now.
func (c *Callback) Refs() int { return c.refs.Load() }
