// Package event is the event model of uvevent, in pure Go: every
// asynchronous primitive — timer, trigger, future, a goroutine run by a
// reactor, and the rest of the hierarchy — is an Event with callbacks,
// Start/Stop, Replay, Dispose, Info, a notify hook, flags and reference
// counting. A goroutine can wait on any mix of events with Await.
//
// # Owners and threading
//
// Each event belongs to an Owner: a reactor (package reactor), or a Serial
// for events that live outside any loop. Constructors take an OwnerSource,
// so the reactor itself names its owner: event.NewFuture[T](r). An event's
// state changes only with its owner held. Every method of Event is safe from any goroutine: called
// on the loop goroutine (inside a callback) it runs at once; from elsewhere it
// runs on the loop and returns when done. Callbacks run on the loop goroutine
// and must not block it: give blocking work to a goroutine and complete a
// Future from it.
//
// # Callbacks
//
// A Callback is reference counted: one callback may sit in the vectors of
// several events (a waker uses one for all the events it waits on); each
// vector holds a reference, and the callback's dispose function runs once,
// when the last holder lets go. A notification pass keeps three rules
// whatever its callbacks do to the vector: a callback removed before its turn
// is not called; a callback added during the pass is called in the same
// pass; every other callback is called exactly once. A callback that
// notifies the event whose pass is running gets ErrNestedNotify, and the
// outer pass goes on. A panicking callback is recovered and reported to the
// owner, and the pass goes on with the next callback.
//
// # Lifecycle
//
// Created → Active (Start) → Fired (during a notification) → Active again for
// periodic events, or Closed for one-shot ones; Stopped (the last Stop) can
// be started again; Closed is final. Start on a started event only counts;
// the last Stop really stops; Stop on a stopped event does nothing; Start on
// a closed event returns ErrClosed. Close notifies the remaining subscribers
// with ErrClosed and releases them; a callback that closes the event whose
// pass is running lets that pass deliver its notification to the rest, who
// are released after it. Dispose drops a reference; the last one
// closes the event.
//
// # Replay
//
// Events that store a result (Future, a reactor's Coroutine, an async Op) replay it to
// late subscribers: Replay calls the callback at once with the stored
// outcome, and Await on such a closed event returns it. Await on a closed
// event that stores nothing returns an ErrClosed outcome instead of hanging.
// A Handoff, re-armable, keeps an outcome only until one taker has it: a
// Replay or a wait takes it, and the handoff is empty again.
//
// # Waiting
//
// Await waits on any mix of events and returns one Outcome per event, at
// the event's position. Its Mode says when the wait is over (Any, All,
// FirstSuccess, AtLeast, each with IgnoreErrors, bounded with Within). It
// starts the events that live in a loop and stops them afterwards (the
// Start is counted), replays closed events that store a result, and does
// not park when that satisfies the wait. Typed events (Typed: *Future[T],
// *Handoff[T], a reactor's *Coroutine[T], an async.Op[T]) have typed waits: Future.Await,
// AwaitValue, AwaitAll (values by position), AwaitAllSettled (values and
// errors by position) and AwaitFirst (the winner and its position); they
// take a slice of one kind as it is (AwaitAll(ctx, tasks...)).
//
// Every kind is a Source of its result type, and On subscribes a typed
// function to it: On(timer, func(struct{}, error)), On(listener,
// func(*uv.IO, error)). On leaves out the notification a close sends
// unless asked for it (WithClose). A wait that runs out of time ends with a *TimeoutError,
// which matches ErrTimeout and context.DeadlineExceeded.
//
// # Reports
//
// The owner hears of faults the program should know about: a panicking
// callback, an error nobody received (no ErrorCaught or ErrorHandled), a
// result nobody used (no ResultUsed). Reactors send them to their OnReport
// function or to log/slog.
//
// # Writing a kind of event
//
// The event model is open: a program can define its own kinds (a sensor
// reading, a queue's "not empty", an adapter over another library's
// callbacks) that wait, replay and report like the built-in ones, in a
// reactor or outside any (Serial). Package eventkind is the API for that,
// and what packages reactor, uv and async build on: a kind embeds Base and
// makes its calls on it through eventkind. LogReport formats a report for
// log/slog.
//
// # Nil and zero values
//
// A nil pointer to a type of the package (a *Base, *Future, *Callback or
// *Serial) is none of them: a method called on it may panic, as the
// standard library's do. Nil and zero input is refused with a clear error,
// never a panic: a nil argument (a nil event, callback, owner or context)
// and a zero value (a pointer to a Base, Future or Serial not made by its
// constructor). A method with an error returns one matching ErrNilEvent
// (ErrNilCallback for a callback, ErrNoOwner for an event made with no
// owner); one without does nothing and returns zero values (Flags is 0,
// Object nil; Info describes the missing event).
package event
