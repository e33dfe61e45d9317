package reactor

import (
	"context"

	"github.com/uvevent/uvevent/event"
)

// This file declares the event methods of Timer and Coroutine on the types
// themselves rather than leave them promoted from what they embed: a
// promoted method called on a nil *Timer, or on a zero Coroutine (whose
// embedded result is a nil interface), panics in Go's own method wrapper
// before any code of the module runs. Declared here, each refuses such a
// receiver as the zero values of the other kinds do: an error matching
// event.ErrNilEvent, or nothing for the methods without an error.

// AddCallback subscribes cb (see event.Event).
func (t *Timer) AddCallback(cb *event.Callback) error {
	if t == nil {
		return event.ErrNilEvent
	}
	return t.Base.AddCallback(cb)
}

// DelCallback unsubscribes cb (see event.Event).
func (t *Timer) DelCallback(cb *event.Callback) error {
	if t == nil {
		return event.ErrNilEvent
	}
	return t.Base.DelCallback(cb)
}

// Start starts the timer (see event.Event).
func (t *Timer) Start() error {
	if t == nil {
		return event.ErrNilEvent
	}
	return t.Base.Start()
}

// Stop stops the timer (see event.Event).
func (t *Timer) Stop() error {
	if t == nil {
		return event.ErrNilEvent
	}
	return t.Base.Stop()
}

// Replay refuses: a timer stores no result (see event.Event).
func (t *Timer) Replay(cb *event.Callback) error {
	if t == nil {
		return event.ErrNilEvent
	}
	return t.Base.Replay(cb)
}

// Close closes the timer (see event.Event).
func (t *Timer) Close() error {
	if t == nil {
		return event.ErrNilEvent
	}
	return t.Base.Close()
}

// Retain adds a reference (see event.Event).
func (t *Timer) Retain() {
	if t != nil {
		t.Base.Retain()
	}
}

// Dispose drops a reference (see event.Event).
func (t *Timer) Dispose() {
	if t != nil {
		t.Base.Dispose()
	}
}

// Info describes the timer (see event.Event).
func (t *Timer) Info() string {
	if t == nil {
		return "event(" + event.ErrNilEvent.Error() + ")"
	}
	return t.Base.Info()
}

// Flags returns the timer's flags (see event.Event).
func (t *Timer) Flags() event.Flags {
	if t == nil {
		return 0
	}
	return t.Base.Flags()
}

// SetNotifyHook installs or removes the notify hook (see event.Event).
func (t *Timer) SetNotifyHook(h event.NotifyHook) error {
	if t == nil {
		return event.ErrNilEvent
	}
	return t.Base.SetNotifyHook(h)
}

// SetObject records an owning object (see event.Base).
func (t *Timer) SetObject(o any) error {
	if t == nil {
		return event.ErrNilEvent
	}
	return t.Base.SetObject(o)
}

// Object returns the owning object recorded by SetObject, or nil.
func (t *Timer) Object() any {
	if t == nil {
		return nil
	}
	return t.Base.Object()
}

// SetHidden marks the timer hidden or not (see event.Base).
func (t *Timer) SetHidden(hidden bool) error {
	if t == nil {
		return event.ErrNilEvent
	}
	return t.Base.SetHidden(hidden)
}

// MarkErrorHandled sets event.ErrorHandled (see event.Base).
func (t *Timer) MarkErrorHandled() {
	if t != nil {
		t.Base.MarkErrorHandled()
	}
}

// usable reports whether c is a coroutine Spawn or Go made.
func (c *Coroutine[T]) usable() bool { return c != nil && c.f != nil && c.co != nil }

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
