// Package waiting is the contract between event.Await and those that must
// hear of a wait: the owners that end waits when they shut down (a
// reactor's Close) and the coroutines whose waits a reactor watches for
// deadlocks. It is internal: applications never see this plumbing in the
// API of package event.
//
// The waiter a context carries (With, or Bind for a coroutine's own
// context) is checked by package event against
// its own interfaces: BeginWait([]event.Event, State) and EndWait(), and,
// for a cooperative coroutine, Parks() bool, Park(w interface{ Arm(resume func()) })
// and Done() <-chan struct{} (see the waker in package event). A coroutine
// that also has Covers(event.Owner) bool, Spare() *Spare, Wake() func() and
// ParkOne([]event.Event, State) bool gets Await's fast path for a wait on
// one event of its own reactor (event/await_one.go).
package waiting

import "context"

// State is one running wait, as its waiter and the owners see it.
type State interface {
	// Abort ends the wait with err (if it is not over yet).
	Abort(err error)
	// Done reports whether the wait is over: satisfied, aborted, or its
	// context done. It may be over before its goroutine has resumed: a
	// waiter that is done can no longer be part of a deadlock.
	Done() bool
	// Bounded reports whether the wait ends by itself (a Within timeout,
	// which acts as a timer): such a waiter is never deadlocked. A context
	// deadline does not count: a deadlock is reported at once rather than
	// when the deadline comes.
	Bounded() bool
}

// Registry is implemented by owners that end the waits on their events
// when they shut down, so that no waiter hangs on an owner that is gone.
// Await registers with each owner of its events.
type Registry interface {
	AddWait(w State) (remove func())
}

type key struct{}

// With returns a context that carries the waiter w.
func With(ctx context.Context, w any) context.Context {
	return context.WithValue(ctx, key{}, w)
}

// Bind returns ctx carrying the waiter w as With does, for a waiter whose
// waits use ctx itself (a coroutine's own context): From finds w on it
// without walking the chain of contexts. Everything else is ctx's.
func Bind(ctx context.Context, w any) context.Context {
	return &bound{Context: ctx, w: w}
}

// bound is the context Bind returns. Value passes every other key on, so
// a context derived from it still finds the cancellation of ctx (and
// context.WithCancel needs no goroutine to follow it).
type bound struct {
	context.Context
	w any
}

func (c *bound) Value(k any) any {
	if k == (key{}) {
		return c.w
	}
	return c.Context.Value(k)
}

// From returns the waiter ctx carries, or nil.
func From(ctx context.Context) any {
	if c, ok := ctx.(*bound); ok {
		return c.w // the commonest case: a coroutine waiting with its own context
	}
	return ctx.Value(key{})
}

// Spare keeps the state of a waiter's last wait for its next one. A waiter
// that waits on one thing at a time from one goroutine (a cooperative
// coroutine) offers one, through a method Spare() *Spare, so that its
// waits need not allocate; package event decides what it keeps there. Only
// the waiter's own goroutine touches it.
type Spare struct {
	v    any
	busy bool // a wait in progress owns v
}

// Take returns what is kept, nil when there is nothing or a wait in
// progress has it; until Put, the caller owns it.
func (s *Spare) Take() any {
	if s.busy {
		return nil
	}
	s.busy = true
	return s.v
}

// Put keeps v for the next wait (v may be what Take returned).
func (s *Spare) Put(v any) {
	if s.v != v { // a pointer written only when it changes (see package event)
		s.v = v
	}
	s.busy = false
}
