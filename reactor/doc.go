// Package reactor is the loop: one libuv loop (uv_loop_t) per Reactor,
// driven by one goroutine at a time, with goroutine-safe submission, a
// Go-side timer wheel, goroutines run as events (Go), deadlock detection and
// counters (Stats).
//
// # Threading
//
// The goroutine inside Run, RunOnce, RunNoWait or Serve is the loop goroutine: it alone
// calls libuv and touches event state, and every callback runs on it. Every
// method of a Reactor and of its events is safe from any goroutine:
//   - on the loop goroutine (inside a callback) an operation runs at once;
//   - from another goroutine while the loop runs, it is queued and the loop
//     is woken; wake-ups coalesce; Call waits for the result, Post does not;
//   - while no goroutine runs the loop, the caller runs the operation itself,
//     under the reactor's lock, as a libuv program sets up handles before
//     uv_run.
//
// A callback that blocks stalls the loop. Run blocking work in a goroutine
// (Go, or a plain goroutine that completes an event.Future).
//
// # Coroutines
//
// Spawn runs a function as a cooperative coroutine: it holds the loop's
// baton while it runs, never at the same time as the reactor's callbacks
// or its other cooperative coroutines, and gives the baton back while it
// waits in event.Await; its code may use loop-owned state without locks,
// and must not block otherwise. Go runs a function in its own goroutine,
// in parallel with the loop. Both return a Coroutine[T], the event of the
// function's result; Cancel, and Close, end its context. docs/concurrency.md
// is the guide.
//
// # Driving the loop
//
// With nothing to run, the loop goroutine blocks in the kernel itself, as
// libuv's own loop does: in one uv_run(UV_RUN_ONCE) per wait on the libuv
// driver, bounded by the Go timer wheel's next due, in epoll_wait on the
// reactor's epoll set on the pure-Go driver. Another goroutine wakes it
// through the kernel only while it sleeps there, so wake-ups coalesce; after
// such a wake-up the loop parks in Go for a few waits instead, where a
// channel send wakes it at Go scheduler speed. A busy turn runs
// uv_run(UV_RUN_NOWAIT) only when libuv has something to do; a turn that
// only has timers and queued Go work makes no cgo call at all, and a loop
// that never parks yields its processor every 2 ms (docs/architecture.md
// has the measurements behind this design).
// libuv never calls Go: its callbacks append completion records that the
// loop reads after each turn, so a Go panic can never unwind through C.
//
// # Lifetime
//
// Close closes every event still open (subscribers get ErrClosed), turns the
// loop until libuv has run every close callback, and frees the loop. C-owned
// events are reached through ids with generations (package eventref), so a
// late record or a collected reference never touches a recycled slot.
//
// # Deadlocks
//
// Functions run with Spawn or Go are the reactor's coroutines. When all of
// them wait in event.Await, no operation is queued and no active, non-hidden
// event remains, nothing can ever wake them: after one more non-blocking
// turn has ruled out a false alarm, each wait ends with a *DeadlockError
// (matching event.ErrDeadlock) that lists the waiters, where each waits, and
// the Info of what each waits on. A waiter whose context is done or whose
// wait is satisfied is not deadlocked. Work the reactor cannot see — a goroutine outside it that will
// complete a future — is declared with Hold.
package reactor
