package event

import (
	"fmt"
	"log/slog"
	"runtime"
	"sync/atomic"
)

// A Future is an event completed once, from any goroutine, with a value or
// an error. It stores the outcome and replays it to late subscribers: a
// waiter that comes after completion gets the outcome at once.
//
// Start and Stop do nothing: a future is not armed in a loop. Completion
// closes the future (it is one-shot); subscribers added before completion get
// the outcome as their last notification.
type Future struct {
	Base
	owner  Owner
	state  atomic.Uint32 // futurePending → futureSet (outcome written) → futureDone
	result any
	err    error
}

const (
	futurePending uint32 = iota
	futureSet
	futureDone
)

type futureOps Future

// NewFuture returns a pending future belonging to o.
func NewFuture(o Owner) *Future {
	f := &Future{owner: o}
	Init(&f.Base, (*futureOps)(f), false, GoOwned|ValueResult)
	return f
}

// Resolve completes the future with v. It returns ErrCompleted if the future
// was completed before. It may be called from any goroutine. Subscribers are
// told on the owner's loop goroutine: from another goroutine while the loop
// runs, Resolve queues that and returns; from the loop goroutine, or while
// no goroutine runs the loop, it tells them before returning. If the owner
// is closed, Resolve returns its error, but the future is completed all the
// same: Outcome and Replay give the value (its waiters were ended by the
// owner's Close).
func (f *Future) Resolve(v any) error { return f.complete(v, nil) }

// Reject completes the future with err (which must not be nil).
func (f *Future) Reject(err error) error {
	if err == nil {
		return fmt.Errorf("event: Reject(nil)")
	}
	return f.complete(nil, err)
}

func (f *Future) complete(v any, err error) error {
	if !f.state.CompareAndSwap(futurePending, futureSet) {
		return ErrCompleted
	}
	f.result, f.err = v, err
	if perr := f.owner.Post(f.deliver); perr != nil {
		// The owner is gone: keep the outcome for Outcome and Replay; its
		// waiters were ended when the owner shut down. Nothing else touches
		// the future's state any more, so it is safe to finish here.
		if err != nil && !f.has(ErrorCaught|ErrorHandled) {
			f.watchUnhandled()
		}
		f.state.Store(futureDone)
		return perr
	}
	return nil
}

// deliver runs with the owner held: the outcome becomes visible to Replay,
// the future closes and the subscribers are told.
func (f *Future) deliver() {
	if f.err != nil && !f.has(ErrorCaught|ErrorHandled) {
		f.watchUnhandled()
	}
	f.state.Store(futureDone)
	if f.has(Closed) {
		return // closed early: the outcome is kept for Replay
	}
	Complete(&f.Base, f.result, f.err)
}

// Done reports whether the outcome is delivered.
func (f *Future) Done() bool { return f.state.Load() == futureDone }

// Outcome returns the value and error once the future is done; ok is false
// before. Reading the outcome counts as handling its error.
func (f *Future) Outcome() (v any, err error, ok bool) {
	if !f.Done() {
		return nil, nil, false
	}
	f.observed()
	return f.result, f.err, true
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
func (f *Future) watchUnhandled() {
	u := &unhandled{owner: f.owner, info: fmt.Sprintf("Future(failed: %v)", f.err), err: f.err}
	f.extras().seen = &u.seen
	runtime.AddCleanup(f, reportUnhandled, u)
}

func reportUnhandled(u *unhandled) {
	if u.seen.Load() {
		return
	}
	msg := "unhandled error of a collected " + u.info
	if u.owner.Post(func() { u.owner.Report(nil, msg, u.err) }) != nil {
		LogReport(slog.Default(), nil, msg, u.err)
	}
}

func (o *futureOps) Owner() Owner   { return o.owner }
func (o *futureOps) Event() Event   { return (*Future)(o) }
func (o *futureOps) Arm() error     { return nil }
func (o *futureOps) Disarm()        {}
func (o *futureOps) Free(free bool) {}
func (o *futureOps) Stored() (any, error, bool) {
	if !(*Future)(o).Done() {
		return nil, nil, false
	}
	return o.result, o.err, true // no observed(): Replay and release decide that
}
func (o *futureOps) Describe() string {
	switch {
	case !(*Future)(o).Done():
		return "Future(pending)"
	case o.err != nil:
		return fmt.Sprintf("Future(failed: %v)", o.err)
	default:
		return "Future(completed)"
	}
}
