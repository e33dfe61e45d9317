package event

import (
	"context"
	"fmt"
	"reflect"
	"runtime"
	"sync/atomic"

	"github.com/uvevent/uvevent/internal/waiting"
)

// A Future is an event completed once, from any goroutine, with a value of
// type T or an error. It stores the outcome and replays it to late
// subscribers: a waiter that comes after completion gets the outcome at once.
//
// Start and Stop do nothing: a future is not armed in a loop. Completion
// closes the future (it is one-shot); subscribers added before completion get
// the outcome as their last notification, as a T in the result argument.
//
// A pending future with subscribers is held by its reactor: the reactor's
// Close closes it, and its subscribers hear an error matching ErrClosed
// and reactor.ErrReactorClosed (a later Resolve is still kept for Outcome
// and Replay). A wait on it (Await) is ended by that Close too, with
// reactor.ErrReactorClosed. A future made once its reactor's
// Close has begun is refused: it is born closed and failed with the
// reactor's error (reactor.ErrReactorClosed), which Outcome, Await and a
// subscriber get, and Resolve returns.
type Future[T any] struct {
	Base
	owner   Owner
	state   atomic.Uint32 // futurePending → futureSet (outcome written) → futureDone
	held    bool          // owner-held: its owner's Close holds it (waiting.Holder)
	refused bool          // made on a closing owner: err is the owner's refusal
	result  T
	err     error
}

const (
	futurePending uint32 = iota
	futureSet
	futureDone
)

type futureOps[T any] Future[T]

// NewFuture returns a pending future belonging to src's Owner: a reactor
// (NewFuture[T](r)), an Owner, or a *Serial (see OwnerSource). A future
// made from a nil source, or one that names no owner, is unusable: it is
// born done with ErrNoOwner, which every operation returns (Outcome and
// Await included; Close and Dispose do nothing). One made on a reactor whose Close has
// begun is refused: it is closed already, and done with the reactor's error
// (see Future).
func NewFuture[T any](src OwnerSource) *Future[T] {
	o := ownerOf(src)
	f := &Future[T]{owner: o}
	initBase(&f.Base, (*futureOps[T])(f), false, GoOwned|ValueResult)
	if _, ok := o.(noOwner); ok {
		// Refused at birth, as on a closed reactor: a Resolve must not
		// leave a value that Outcome would give with a nil error.
		f.refuse(ErrNoOwner)
		return f
	}
	if h, ok := o.(waiting.Holder); ok {
		if err := h.Closing(); err != nil {
			f.refuse(err)
		}
	}
	return f
}

// refuse makes a new future, which nobody else has seen yet, closed and
// done with err, the refusal of its closing owner. Its error is no
// failure of work that anyone must hear of: it is not reported unhandled.
func (f *Future[T]) refuse(err error) {
	f.err, f.refused = err, true
	f.state.Store(futureDone)
	f.setFlags(Closed | ErrorCaught)
	f.released()
}

// Resolve completes the future with v. It returns ErrCompleted if the future
// was completed before. It may be called from any goroutine. Subscribers are
// told on the owner's loop goroutine: from another goroutine while the loop
// runs, Resolve queues that and returns; from the loop goroutine, or while
// no goroutine runs the loop, it tells them before returning. If the owner
// is closed, Resolve returns its error, but the future is completed all the
// same: Outcome and Replay give the value (its waiters were ended by the
// owner's Close).
func (f *Future[T]) Resolve(v T) error { return f.complete(v, nil) }

// Reject completes the future with err. A nil err is refused with an error
// matching ErrNilError, and the future is left as it was.
func (f *Future[T]) Reject(err error) error { return reject(f.complete, "Future", err) }

// Settle completes the future with v when err is nil, else with err: the
// way to hand over what a function returned.
func (f *Future[T]) Settle(v T, err error) error { return settle(f.complete, v, err) }

// reject gives put the outcome err, with T's zero value: Reject of a
// Future or a Handoff (kind names it). A nil err is refused with an error
// matching ErrNilError, and put is not called.
func reject[T any](put func(T, error) error, kind string, err error) error {
	if err == nil {
		return fmt.Errorf("event: %s.Reject(nil): %w", kind, ErrNilError)
	}
	var zero T
	return put(zero, err)
}

// settle gives put the outcome v when err is nil, else err with T's zero
// value: Settle of a Future or a Handoff.
func settle[T any](put func(T, error) error, v T, err error) error {
	if err != nil {
		var zero T
		return put(zero, err)
	}
	return put(v, nil)
}

func (f *Future[T]) complete(v T, err error) error {
	if f == nil || f.ops == nil {
		return ErrNilEvent
	}
	if !f.state.CompareAndSwap(futurePending, futureSet) {
		if f.refused {
			return f.err
		}
		return ErrCompleted
	}
	f.result, f.err = v, err
	if f.owner.Owned() {
		f.deliver()
		return nil
	}
	if perr := f.owner.Post(f.deliver); perr != nil {
		// The owner is gone: keep the outcome for Outcome and Replay; its
		// waiters were ended when the owner shut down. Nothing else touches
		// the future's state any more, so it is safe to finish here.
		if err != nil && !f.has(ErrorCaught|ErrorHandled|makerReports) {
			f.watchUnhandled()
		}
		f.state.Store(futureDone)
		return perr
	}
	return nil
}

// deliver runs with the owner held: the outcome becomes visible to Replay,
// the future closes and the subscribers are told.
func (f *Future[T]) deliver() {
	if f.err != nil && !f.has(ErrorCaught|ErrorHandled|makerReports) {
		f.watchUnhandled()
	}
	f.state.Store(futureDone)
	if f.has(Closed) {
		return // closed early: the outcome is kept for Replay
	}
	res := noResult
	if !f.blindOnly() {
		res = f.delivered()
	}
	complete(&f.Base, res, f.err)
}

// noResult is what a future notifies instead of its value when every
// subscriber reads the value itself (Callback.blind: a typed wait), and no
// hook may look at it: boxing a T costs an allocation.
var noResult any = noValue{}

type noValue struct{}

// blindOnly reports whether nobody will look at the notified result.
func (f *Future[T]) blindOnly() bool {
	if f.ext != nil && f.ext.hook != nil {
		return false
	}
	for _, cb := range f.cbs.all() {
		if !cb.blind {
			return false
		}
	}
	return true
}

// delivered is the result as callbacks get it: the value, or nil for a
// failed future.
func (f *Future[T]) delivered() any {
	if f.err != nil {
		return nil
	}
	return f.result
}

// Done reports whether the outcome is delivered.
func (f *Future[T]) Done() bool { return f != nil && f.state.Load() == futureDone }

// Outcome returns the value and the error once the future is done; ok is
// false before. Reading the outcome counts as handling its error.
func (f *Future[T]) Outcome() (v T, ok bool, err error) {
	if !f.Done() {
		return v, false, nil
	}
	f.observed()
	return f.result, true, f.err
}

// Await waits until the future is done, ctx is done or the owner closes,
// and returns its value and error (see the package function Await for the
// rules of waiting).
func (f *Future[T]) Await(ctx context.Context) (T, error) {
	if f == nil || f.ops == nil { // what AwaitValue's isNil finds, without reflect
		var zero T
		return zero, ErrNilEvent
	}
	return awaitValue[T](ctx, f)
}

// unhandled is what a failed future nobody has observed yet leaves for the
// collector: when the future is collected and seen is still false, nobody
// ever learnt of its error, and the owner reports it. This is what GoOwned
// means for reports: the event's lifetime follows the Go object, so the
// "unhandled error" report comes when the object goes, not at a Dispose that
// Go code rarely calls.
type unhandled struct {
	owner Owner
	info  string
	err   error
	seen  atomic.Bool
}

// watchUnhandled arranges the report; it runs with the owner held.
func (f *Future[T]) watchUnhandled() {
	u := &unhandled{owner: f.owner, info: fmt.Sprintf("Future(failed: %v)", f.err), err: f.err}
	f.extras().seen = &u.seen
	runtime.AddCleanup(f, reportUnhandled, u)
}

func reportUnhandled(u *unhandled) {
	if u.seen.Load() {
		return
	}
	msg := "unhandled error of a collected " + u.info
	if u.owner.Post(func() { report(u.owner, nil, msg, u.err) }) != nil {
		report(u.owner, nil, msg, u.err) // the owner has closed: its handler still hears
	}
}

func (o *futureOps[T]) Owner() Owner   { return o.owner }
func (o *futureOps[T]) Event() Event   { return (*Future[T])(o) }
func (o *futureOps[T]) Arm() error     { return nil }
func (o *futureOps[T]) Disarm()        {}
func (o *futureOps[T]) Free(free bool) { o.subscribed(false) }

// OwnerClosed is the close of a held future by its owner's Close
// (waiting.Pending): its subscribers hear why.
func (o *futureOps[T]) OwnerClosed(why error) { (*Future[T])(o).close(why) }

// subscribed holds the future in its owner's Close while it has
// subscribers (see subscribedOps), and lets it go when it has none or
// closes (Free).
func (o *futureOps[T]) subscribed(any bool) { holdWhileSubscribed(o.owner, o, &o.held, any) }

// holdWhileSubscribed has p held in its owner's Close (waiting.Holder)
// while it has subscribers, and let go when it has none: held records
// which, so that each change is made once. A future's and a handoff's.
func holdWhileSubscribed(owner any, p waiting.Pending, held *bool, any bool) {
	if any == *held {
		return
	}
	h, ok := owner.(waiting.Holder)
	if !ok {
		return
	}
	*held = any
	if any {
		h.HoldPending(p)
	} else {
		h.UnholdPending(p)
	}
}
func (o *futureOps[T]) Stored() (any, error, bool) {
	if !(*Future[T])(o).Done() {
		return nil, nil, false
	}
	return (*Future[T])(o).delivered(), o.err, true // no observed(): Replay and release decide that
}
func (o *futureOps[T]) Describe() string {
	switch {
	case !(*Future[T])(o).Done() && o.has(Closed):
		return "Future(closed)" // closed by its holder before completion
	case !(*Future[T])(o).Done():
		return "Future(pending)"
	case o.err != nil:
		return fmt.Sprintf("Future(failed: %v)", o.err)
	default:
		return "Future(completed)"
	}
}

// noOwner stands in for a nil Owner: it refuses every operation.
type noOwner struct{}

func (noOwner) Owner() Owner      { return noOwner{} }
func (noOwner) Owned() bool       { return false }
func (noOwner) Call(func()) error { return ErrNoOwner }
func (noOwner) Post(func()) error { return ErrNoOwner }

// ownerOf returns the Owner src names, or noOwner when src is nil (or a
// typed nil pointer) or names none.
func ownerOf(src OwnerSource) Owner {
	if isNilPointer(src) {
		return noOwner{}
	}
	o := src.Owner()
	if isNilPointer(o) {
		return noOwner{}
	}
	return o
}

// isNilPointer reports whether v is nil or a typed nil pointer.
func isNilPointer(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}
