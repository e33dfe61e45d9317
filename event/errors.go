package event

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"time"

	"github.com/uvevent/uvevent/refcount"
)

// Errors returned by events and the waker. All work with errors.Is.
var (
	// ErrClosed: the event is closed; it cannot be started or subscribed to,
	// and a waiter on it that cannot be replayed gets this error.
	ErrClosed = errors.New("event: closed")
	// ErrNestedNotify: a callback tried to notify the event whose
	// notification is running. The inner notification is refused; the outer
	// pass goes on.
	ErrNestedNotify = errors.New("event: nested notify of the same event refused")
	// ErrNotReplayable: the event stores no result to replay.
	ErrNotReplayable = errors.New("event: no stored result to replay")
	// ErrNotSubscribed: DelCallback was given a callback the event does not hold.
	ErrNotSubscribed = errors.New("event: callback not subscribed to this event")
	// ErrCompleted: a future was resolved or rejected a second time.
	ErrCompleted = errors.New("event: future already completed")
	// ErrTimeout: a wait or a timeout event ran out of time. Every timeout
	// error of the module is a *TimeoutError, which matches both ErrTimeout
	// and context.DeadlineExceeded.
	ErrTimeout error = &TimeoutError{}
	// ErrDeadlock: every goroutine run by a reactor waits and no active
	// event can ever wake one. The error carries a report; see
	// reactor.DeadlockError.
	ErrDeadlock = errors.New("event: deadlock")
	// ErrOnLoop: a blocking wait was attempted on the loop goroutine, which
	// would stall the loop forever.
	ErrOnLoop = errors.New("event: blocking wait on the loop goroutine")
	// ErrNilCallback: a nil callback (or a Callback made from a nil
	// function) was given to AddCallback, Replay or Subscribe.
	ErrNilCallback = errors.New("event: nil callback")
	// ErrNilEvent: a nil event, or a typed nil pointer to one, was given to
	// Await or Subscribe.
	ErrNilEvent = errors.New("event: nil event")
	// ErrNoOwner: the event was made with a nil Owner; every operation on
	// it fails with this error.
	ErrNoOwner = errors.New("event: made without an owner")
	// ErrNilError: a nil error was given where a failure is needed
	// (Future.Reject, async.Suspension.Throw). It matches syscall.EINVAL.
	ErrNilError = fmt.Errorf("event: nil error: %w", syscall.EINVAL)
	// ErrBadMode: Await was given a mode it cannot keep: AtLeast(n) with n
	// outside 1..len(events), a negative Within, the zero Mode, or no
	// events at all. It matches syscall.EINVAL.
	ErrBadMode = fmt.Errorf("event: bad wait mode: %w", syscall.EINVAL)
	// ErrReleased: an event's or a callback's reference count was used
	// after its last release (Retain after the last Dispose, a Release too
	// many, a subscription of a released callback). It matches
	// refcount.ErrMisuse. The methods without an error result (Retain,
	// Dispose, Release) report it (see Base.Retain) instead of panicking.
	ErrReleased = fmt.Errorf("event: used after its last release: %w", refcount.ErrMisuse)
	// ErrNilContext: a wait was given a nil context. It matches
	// syscall.EINVAL.
	ErrNilContext = fmt.Errorf("event: nil context: %w", syscall.EINVAL)
)

// TimeoutError is the error of a wait or an event that ran out of time.
// errors.Is matches it against ErrTimeout and against
// context.DeadlineExceeded, and it has the Timeout method that net.Error
// and os.IsTimeout look for.
type TimeoutError struct {
	// After is the timeout that ran out (0 when unknown).
	After time.Duration
}

// Error returns "timeout occurred after 50ms" (or "timed out" when After
// is not known).
func (e *TimeoutError) Error() string {
	if e != nil && e.After > 0 {
		return "timeout occurred after " + e.After.String()
	}
	return "timed out"
}

// Timeout reports true.
func (e *TimeoutError) Timeout() bool { return true }

// Is matches ErrTimeout and context.DeadlineExceeded.
func (e *TimeoutError) Is(target error) bool {
	return target == ErrTimeout || target == context.DeadlineExceeded
}

// PanicError wraps a value recovered from a panic: in a callback, a posted
// operation or a goroutine run by a reactor (the report says which).
type PanicError struct {
	Value any    // what was panicked with
	Stack []byte // the stack at the panic
}

// Error returns "panic: " and the panic value.
func (e *PanicError) Error() string {
	if e == nil {
		return "panic: <nil>"
	}
	return fmt.Sprint("panic: ", e.Value)
}

// Unwrap returns the panic value when it is an error.
func (e *PanicError) Unwrap() error {
	if e == nil {
		return nil
	}
	err, _ := e.Value.(error)
	return err
}

// UnhandledError is the error of an "unhandled error" report about a
// coroutine whose failure nobody took: Err is what it failed with, Site
// the line that spawned it ("dir/file.go:42"). errors.Is and errors.As see
// Err through it.
type UnhandledError struct {
	// Err is the error the coroutine failed with.
	Err error
	// Site is "dir/file.go:line" of the Spawn or Go call that made it.
	Site string
}

// Error returns Err's message and where the coroutine was spawned.
func (e *UnhandledError) Error() string {
	if e == nil || e.Err == nil {
		return "unhandled error"
	}
	if e.Site == "" {
		return e.Err.Error()
	}
	return e.Err.Error() + " (coroutine spawned at " + e.Site + ")"
}

// Unwrap returns Err.
func (e *UnhandledError) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.Err
}
