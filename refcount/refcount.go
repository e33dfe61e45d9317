// Package refcount holds reference counts that release exactly once.
//
// Events and callbacks are shared: one callback sits in the vectors of every
// event a waker waits on, and an event is held by its creator, by the reactor
// while it is armed, and by every reference the user keeps. A Count says who
// frees: the holder whose Release returns true, and only that one.
//
// A Count is safe for use by many goroutines at once. Using a Count after its
// last Release (retaining it again, or releasing it once more) is a bug in the
// caller; it panics with ErrMisuse rather than corrupting memory that may
// already be reused.
package refcount

import (
	"errors"
	"fmt"
	"sync/atomic"
)

// ErrMisuse is the panic value's wrapped error for a retain or release of a
// count that already reached zero.
var ErrMisuse = errors.New("refcount: use after last release")

// Count is a reference count. The zero Count holds one reference: the
// creator's. Counts must not be copied after first use.
type Count struct {
	// extra is the number of references beyond the first, so that the zero
	// value means "one holder" and needs no constructor; -1 means released.
	extra atomic.Int32
}

// Retain adds a reference. It panics if the count was already released.
func (c *Count) Retain() {
	for {
		n := c.extra.Load()
		if n < 0 {
			panic(fmt.Errorf("%w (retain)", ErrMisuse))
		}
		if c.extra.CompareAndSwap(n, n+1) {
			return
		}
	}
}

// TryRetain adds a reference unless the count was already released: it
// reports whether it did. For holders that refuse a late retain (an event
// retained after its last Dispose) instead of panicking.
func (c *Count) TryRetain() bool {
	for {
		n := c.extra.Load()
		if n < 0 {
			return false
		}
		if c.extra.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// Release drops a reference and reports whether it was the last one. Exactly
// one call returns true over the life of the count.
func (c *Count) Release() bool {
	n := c.extra.Add(-1)
	if n < -1 {
		panic(fmt.Errorf("%w (release)", ErrMisuse))
	}
	return n == -1
}

// TryRelease drops a reference if one is left: ok is false, and nothing
// changes, once the count is released. last reports whether this call
// released it. For holders whose extra release is allowed to be a no-op
// (an event's Dispose after it is gone), without a check-then-act race.
func (c *Count) TryRelease() (last, ok bool) {
	for {
		n := c.extra.Load()
		if n < 0 {
			return false, false
		}
		if c.extra.CompareAndSwap(n, n-1) {
			return n == 0, true
		}
	}
}

// Load returns the number of references held now (0 once released).
func (c *Count) Load() int {
	return int(c.extra.Load()) + 1
}
