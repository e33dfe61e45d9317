package reactor

import (
	"context"

	"github.com/uvevent/uvevent/event"
)

// This file declares the event methods of Coroutine on the type itself
// rather than leave them promoted from the event.Typed it embeds: on a zero
// Coroutine that interface is nil, and a promoted call would panic in Go's
// own method wrapper. Declared here, each refuses a zero Coroutine as the
// zero values of the other kinds are refused: an error matching
// event.ErrNilEvent, or nothing for the methods without an error.

// usable reports whether c is a coroutine Spawn or Go made, not a zero
// Coroutine.
func (c *Coroutine[T]) usable() bool { return c.f != nil && c.co != nil }

// AddCallback subscribes cb to the coroutine's result (see event.Event).
func (c *Coroutine[T]) AddCallback(cb *event.Callback) error {
	if !c.usable() {
		return event.ErrNilEvent
	}
	return c.Typed.AddCallback(cb)
}

// DelCallback unsubscribes cb (see event.Event).
func (c *Coroutine[T]) DelCallback(cb *event.Callback) error {
	if !c.usable() {
		return event.ErrNilEvent
	}
	return c.Typed.DelCallback(cb)
}

// Start does nothing: a coroutine runs from its creation (see event.Event).
func (c *Coroutine[T]) Start() error {
	if !c.usable() {
		return event.ErrNilEvent
	}
	return c.Typed.Start()
}

// Stop does nothing (see Start).
func (c *Coroutine[T]) Stop() error {
	if !c.usable() {
		return event.ErrNilEvent
	}
	return c.Typed.Stop()
}

// Replay delivers the stored result to cb once the coroutine has finished
// (see event.Event).
func (c *Coroutine[T]) Replay(cb *event.Callback) error {
	if !c.usable() {
		return event.ErrNilEvent
	}
	return c.Typed.Replay(cb)
}

// Close closes the coroutine's event (see event.Event); it does not stop
// the coroutine (Cancel does).
func (c *Coroutine[T]) Close() error {
	if !c.usable() {
		return event.ErrNilEvent
	}
	return c.Typed.Close()
}

// Retain adds a reference (see event.Event).
func (c *Coroutine[T]) Retain() {
	if c.usable() {
		c.Typed.Retain()
	}
}

// Dispose drops a reference (see event.Event).
func (c *Coroutine[T]) Dispose() {
	if c.usable() {
		c.Typed.Dispose()
	}
}

// Flags returns the flags of the coroutine's event (see event.Event).
func (c *Coroutine[T]) Flags() event.Flags {
	if !c.usable() {
		return 0
	}
	return c.Typed.Flags()
}

// SetNotifyHook installs or removes the notify hook (see event.Event).
func (c *Coroutine[T]) SetNotifyHook(h event.NotifyHook) error {
	if !c.usable() {
		return event.ErrNilEvent
	}
	return c.Typed.SetNotifyHook(h)
}

// Outcome returns the coroutine's value and error once it has finished; ok
// is false before (see event.Typed).
func (c *Coroutine[T]) Outcome() (v T, ok bool, err error) {
	if !c.usable() {
		return v, false, nil
	}
	return c.Typed.Outcome()
}

// Await waits for the coroutine's result (see event.Await for the rules).
func (c *Coroutine[T]) Await(ctx context.Context) (T, error) {
	if !c.usable() {
		var zero T
		return zero, event.ErrNilEvent
	}
	return c.f.Await(ctx)
}
