package async

import (
	"context"
	"sync/atomic"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/eventkind"
	"github.com/uvevent/uvevent/internal/waiting"
	"github.com/uvevent/uvevent/reactor"
)

// An Op is a one-shot operation on a Channel or a Pool, as an event: a
// send, a receive, an acquire. It takes part only while it is started:
// Start puts it in line (or completes it at once when it can), Stop takes it
// out of line if it has not completed. event.Await starts the events it
// waits on and stops them afterwards, so an Op that loses a race with other
// events in one wait never takes a value nobody will read.
//
// An Op completes with its value (the value received, sent or acquired) or
// an error, closes, and replays its outcome to late waiters. It is hidden:
// a started Op does not keep a reactor's Run going, and a coroutine waiting
// on one that nothing can complete is reported as deadlocked.
//
// An Op waiting in line is held by its reactor: the reactor's Close
// completes it with an error matching event.ErrClosed and
// reactor.ErrReactorClosed. Once that Close has begun, Start refuses with
// reactor.ErrReactorClosed.
type Op[T any] struct {
	event.Base
	r      *reactor.Reactor
	src    opSource[T]
	done   atomic.Bool
	value  T
	err    error
	queued bool // loop-owned: it waits in its source's line
	held   bool // loop-owned: its reactor's Close holds it (HoldPending)
}

// opSource is what an Op works on: a channel or a pool, in one of its
// roles (send, receive, acquire).
type opSource[T any] interface {
	arm(op *Op[T])    // take part: complete op now, or queue it
	disarm(op *Op[T]) // leave the line (op.queued is true)
	describe(op *Op[T]) string
}

type opOps[T any] Op[T]

func newOp[T any](r *reactor.Reactor, src opSource[T], v T) *Op[T] {
	op := &Op[T]{r: r, src: src, value: v}
	eventkind.Init(&op.Base, (*opOps[T])(op), true, event.GoOwned|event.Hidden)
	return op
}

// complete ends op with (v, err); it runs with the loop held.
func (op *Op[T]) complete(v T, err error) {
	if op.done.Load() {
		return
	}
	op.unhold()
	op.value, op.err = v, err
	op.done.Store(true)
	var res any = v
	if err != nil {
		res = nil
	}
	eventkind.Complete(&op.Base, res, err)
}

// Outcome returns the Op's value and error once it has completed; ok is
// false before.
func (op *Op[T]) Outcome() (v T, ok bool, err error) {
	if op == nil || !op.done.Load() {
		return v, false, nil
	}
	return op.value, true, op.err
}

// Await starts the Op, waits for it (see event.Await) and returns its
// value and error.
func (op *Op[T]) Await(ctx context.Context) (T, error) {
	return event.AwaitValue[T](ctx, op)
}

func (o *opOps[T]) Owner() event.Owner { return o.r.Owner() }
func (o *opOps[T]) Event() event.Event { return (*Op[T])(o) }
func (o *opOps[T]) Arm() error {
	if err := closing(o.r); err != nil {
		return err
	}
	op := (*Op[T])(o)
	o.src.arm(op)
	if o.queued && !o.held {
		o.held = true
		holder(o.r).HoldPending(o)
	}
	return nil
}
func (o *opOps[T]) Disarm() {
	if o.queued {
		o.src.disarm((*Op[T])(o))
		o.queued = false
	}
	(*Op[T])(o).unhold()
}
func (o *opOps[T]) Free(bool) { (*Op[T])(o).unhold() }

// OwnerClosed is the end of an Op in line at its reactor's Close
// (internal/waiting.Pending): it completes with why.
func (o *opOps[T]) OwnerClosed(why error) {
	o.held = false
	var zero T
	(*Op[T])(o).complete(zero, why)
}

// holder is r's owner as this package reaches it: the holder of the
// events r's Close must close (internal/waiting.Holder), which every
// reactor's owner is.
func holder(r *reactor.Reactor) waiting.Holder { return r.Owner().(waiting.Holder) }

// closing refuses with reactor.ErrReactorClosed once r's Close has begun
// (reactor.ErrZeroReactor for a zero one).
func closing(r *reactor.Reactor) error { return holder(r).Closing() }

// unhold takes the Op out of its reactor's Close; with the loop held.
func (op *Op[T]) unhold() {
	if op.held {
		op.held = false
		holder(op.r).UnholdPending((*opOps[T])(op))
	}
}
func (o *opOps[T]) Describe() string { return o.src.describe((*Op[T])(o)) }
func (o *opOps[T]) Stored() (any, error, bool) {
	if !o.done.Load() {
		return nil, nil, false
	}
	if o.err != nil {
		return nil, o.err, true
	}
	return o.value, nil, true
}

// line is a FIFO of queued ops.
type line[T any] []*Op[T]

func (l *line[T]) push(op *Op[T]) {
	op.queued = true
	*l = append(*l, op)
}

func (l *line[T]) pop() *Op[T] {
	if len(*l) == 0 {
		return nil
	}
	op := (*l)[0]
	(*l)[0] = nil
	*l = (*l)[1:]
	op.queued = false
	return op
}

func (l *line[T]) remove(op *Op[T]) {
	for i, o := range *l {
		if o == op {
			*l = append((*l)[:i], (*l)[i+1:]...)
			return
		}
	}
}
