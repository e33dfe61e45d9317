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
// A nil pointer to any type of the package, or a pointer to its zero value,
// is refused by every method, never a panic: a method with an error returns
// one matching event.ErrNilEvent (or reactor.ErrZeroReactor); one without
// does nothing and returns zero values. The methods Op and Timeout would
// promote from event.Base and reactor.Timer are declared on them for this
// (znilsafe.go, written by go generate).
//
//go:generate go run ../internal/cmd/nilsafegen
package async
