// Package async is structured concurrency on a reactor, built from events:
// Channel, Group, Pool, Scope, Suspension and Timeout. Each operation that
// waits is an event (a channel's send and receive and a pool's acquire are
// Ops; a task is a reactor.Coroutine; a timeout is a timer), so one
// event.Await can mix any of them with timers, I/O and futures, and the
// reactor's deadlock check sees every coroutine that waits on them.
//
// # Coroutines
//
// The tasks of a Group or a Scope are reactor coroutines of either kind:
// Spawn makes cooperative ones, which run only while they hold the loop's
// baton and so may use loop-owned state without locks; Go makes goroutines
// that run in parallel with the loop. See reactor.Spawn and reactor.Go.
//
// reactor.Spawn and reactor.Go take a context and a reactor; this
// package's Spawn and Go take a Scope in their place, because a Scope holds
// both (NewScope(ctx, r)): its coroutines run on its reactor with contexts
// derived from its own, cancelled when the scope is. They would be methods
// of Scope, but a Go method cannot have type parameters of its own, so they
// are functions whose first argument is the scope; a Group[T], which has
// its T and was made with the context and the reactor, has them as methods
// (g.Spawn(fn)).
//
// # Ops
//
// An Op takes part only while it is started: event.Await starts the events
// it waits on and stops them when the wait ends, so a receive that loses a
// race against a timeout leaves the channel's line and takes nothing. Ops
// are hidden events: they do not keep Run going, and a coroutine waiting on
// one that nothing can complete — a receive nobody sends to, an acquire
// nobody releases for — is reported as deadlocked (reactor.DeadlockError).
//
// # Threading
//
// Every method is safe from any goroutine. State of channels and pools is
// loop-owned; their callbacks (Pool's Destroy and Healthy) run on the loop
// goroutine and must not block.
//
// # Nil and zero values
//
// A nil pointer to a type of the package is none of them: a method called
// on it may panic, as the standard library's do. Nil and zero input is
// refused with a clear error, never a panic: a nil argument (a nil reactor,
// callback, function or context) and a zero value (a pointer to a type's
// zero value, not made by a constructor). A method with an error returns
// one matching event.ErrNilEvent (or reactor.ErrZeroReactor); one without
// does nothing and returns zero values.
package async
