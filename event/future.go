package event

import (
	"fmt"
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
// no goroutine runs the loop, it tells them before returning.
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
		// waiters were ended when the owner shut down.
		f.state.Store(futureDone)
		return perr
	}
	return nil
}

// deliver runs with the owner held: the outcome becomes visible to Replay,
// the future closes and the subscribers are told.
func (f *Future) deliver() {
	f.state.Store(futureDone)
	if f.has(Closed) {
		return // closed early: the outcome is kept for Replay
	}
	Complete(&f.Base, f.result, f.err)
}

// Done reports whether the outcome is delivered.
func (f *Future) Done() bool { return f.state.Load() == futureDone }

// Outcome returns the value and error once the future is done; ok is false
// before.
func (f *Future) Outcome() (v any, err error, ok bool) {
	if !f.Done() {
		return nil, nil, false
	}
	return f.result, f.err, true
}

func (o *futureOps) Owner() Owner   { return o.owner }
func (o *futureOps) Event() Event   { return (*Future)(o) }
func (o *futureOps) Arm() error     { return nil }
func (o *futureOps) Disarm()        {}
func (o *futureOps) Free(free bool) {}
func (o *futureOps) Stored() (any, error, bool) {
	return (*Future)(o).Outcome()
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
