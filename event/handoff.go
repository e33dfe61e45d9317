package event

import (
	"context"
	"fmt"
	"sync/atomic"
	"syscall"

	"github.com/uvevent/uvevent/internal/waiting"
)

// A Handoff is an event that carries one outcome at a time, a value of type
// T or an error, from whoever resolves it to whoever waits on it, and is
// then ready for the next: the re-armable counterpart of a Future. It suits
// two coroutines that hand values back and forth, or a callback that
// resumes a coroutine again and again (what async.Suspension does), with
// one event for the whole exchange instead of a future per outcome.
//
// Resolve, Reject and Settle put an outcome in it, from any goroutine. On
// the owner's loop goroutine the outcome goes to the subscribers present
// then, as one notification (the value as a T in the result argument), and
// the handoff is empty again: each outcome is delivered once. With nobody
// subscribed the outcome is kept: a wait (Await, event.Await) or a Replay
// takes it at once, and so does the notification a new subscriber gets. A
// second outcome while one is kept, or delivered and not yet read by the
// wait it went to, is refused with ErrCompleted: a handoff holds one.
//
// Start and Stop do nothing: a handoff is not armed in a loop, and a
// Resolve delivers whether it is started or not. Close closes it: its
// subscribers hear ErrClosed; an outcome it keeps, or one Resolve puts in
// it later (as into a future closed early), goes to one more wait or
// Replay, and a wait on a closed, empty handoff ends with ErrClosed. A handoff with
// subscribers is held by its reactor: the reactor's Close closes it, and
// they hear an error matching ErrClosed and reactor.ErrReactorClosed. The
// last Dispose closes it; a kept error nobody took is then reported as
// unhandled, as a future's is.
//
// Info describes it: "Handoff(empty)", "Handoff(holding a value)",
// "Handoff(holding an error: ...)", with ", closed" once closed.
type Handoff[T any] struct {
	Base
	owner Owner
	// state says where the outcome is: handoffEmpty → handoffWriting
	// (a Resolve won the slot; only that Resolve moves it on) →
	// handoffKept (written) → handoffEmpty (delivered, or taken by a
	// replay) or handoffClaimed (delivered to one wait that reads the
	// value itself: see claimed) → handoffEmpty. A Resolve on the
	// owner's goroutine that finds such a wait the lone subscriber moves
	// handoffWriting → handoffClaimed at once (handOver). Only Resolve,
	// Reject and Settle leave handoffEmpty; every other move is the
	// owner's, or the claiming wait's.
	state atomic.Uint32
	held  bool // owner-held: its owner's Close holds it (waiting.Holder)
	value T
	err   error
	again bool // owner-held: resolved again during its own notification
}

const (
	handoffEmpty uint32 = iota
	handoffWriting
	handoffKept
	handoffClaimed
)

type handoffOps[T any] Handoff[T]

// NewHandoff returns an empty handoff belonging to src's Owner: a reactor
// (NewHandoff[T](r)), an Owner, or a *Serial (see OwnerSource). A nil
// source, or one that names no owner, is refused with an error matching
// ErrNoOwner and syscall.EINVAL; an owner whose Close has begun with its
// error (reactor.ErrReactorClosed).
func NewHandoff[T any](src OwnerSource) (*Handoff[T], error) {
	o := ownerOf(src)
	if _, ok := o.(noOwner); ok {
		return nil, fmt.Errorf("event: NewHandoff: %w (%w)", ErrNoOwner, syscall.EINVAL)
	}
	if h, ok := o.(waiting.Holder); ok {
		if err := h.Closing(); err != nil {
			return nil, fmt.Errorf("event: NewHandoff: %w", err)
		}
	}
	h := &Handoff[T]{owner: o}
	initBase(&h.Base, (*handoffOps[T])(h), false, GoOwned|ValueResult)
	return h, nil
}

// Resolve hands v over. It may be called from any goroutine; the
// subscribers are told on the owner's loop goroutine, as a Future's are
// (see Future.Resolve). It returns ErrCompleted while the handoff holds an
// outcome not yet taken, and the owner's error when the owner has closed
// (the value is then kept for a wait or Replay, as it is by a closed
// handoff).
func (h *Handoff[T]) Resolve(v T) error { return h.put(v, nil) }

// Reject hands err over as the outcome. A nil err is refused with an error
// matching ErrNilError.
func (h *Handoff[T]) Reject(err error) error { return reject(h.put, "Handoff", err) }

// Settle hands over v when err is nil, else err: what a function returned.
func (h *Handoff[T]) Settle(v T, err error) error { return settle(h.put, v, err) }

func (h *Handoff[T]) put(v T, err error) error {
	if !h.usable() {
		return ErrNilEvent
	}
	if !h.state.CompareAndSwap(handoffEmpty, handoffWriting) {
		return ErrCompleted
	}
	h.value, h.err = v, err
	if h.owner.Owned() {
		if !h.notifying() && !h.has(Closed) && h.handOver() {
			return nil // handoffWriting → handoffClaimed: one store, never kept
		}
		h.state.Store(handoffKept)
		h.deliver()
		return nil
	}
	h.state.Store(handoffKept)
	if perr := h.owner.Post(h.deliver); perr != nil {
		return perr // kept: the owner's Close ended the waits, a Replay still takes it
	}
	return nil
}

// usable reports whether h was made by NewHandoff.
func (h *Handoff[T]) usable() bool { return h != nil && h.ops != nil }

// deliver runs with the owner held: a kept outcome goes to the subscribers
// present, if any, and the handoff is empty again. Inside a notification
// of this handoff (a subscriber resolved it again) the new outcome goes
// out once that pass is over.
func (h *Handoff[T]) deliver() {
	if h.notifying() {
		h.again = true
		return
	}
	for {
		if h.state.Load() != handoffKept || h.has(Closed) || h.cbs.len() == 0 {
			return // taken already, or kept for a wait, a Replay or a subscriber
		}
		if h.handOver() {
			return
		}
		res, err := h.take(h.blindWait())
		h.notify(h.ops.Event(), res, err)
		if !h.again {
			return
		}
		h.again = false
	}
}

// blindWait reports whether the one subscriber is a wait that reads a
// value itself (Callback.blind) and nobody else looks at the result: the
// value is then claimed rather than boxed.
func (h *Handoff[T]) blindWait() bool {
	return h.err == nil && h.cbs.len() == 1 && h.cbs.all()[0].blind && (h.ext == nil || h.ext.hook == nil)
}

// handOver gives the outcome being delivered straight to the one
// subscriber when that is a cooperative coroutine's fast-path wait reading
// the value itself (loneWait): the value stays in the handoff for the wait
// to read (claimed), and no notification pass runs, as no user code is
// called. It reports false, having done nothing, otherwise. The owner is
// held, outside a notification of h, and h is open.
func (h *Handoff[T]) handOver() bool {
	w := h.loneWait()
	if w == nil || !w.claim() {
		return false
	}
	h.state.Store(handoffClaimed)
	w.handedOver(&h.Base)
	return true
}

// loneWait returns the one subscriber when it is a cooperative coroutine's
// fast-path wait (await_one.go) that reads the value itself and nobody else
// looks at the outcome: a value then goes to it without a notification
// pass. The owner is held.
func (h *Handoff[T]) loneWait() *parked {
	if !h.blindWait() {
		return nil
	}
	return h.cbs.all()[0].park
}

// take empties the handoff of its kept outcome and returns it as a
// notification carries it. With blind, the value stays where it is,
// claimed, until the wait it goes to reads it (claimed): the result is
// noResult. The owner is held.
func (h *Handoff[T]) take(blind bool) (any, error) {
	if blind && h.err == nil {
		h.state.Store(handoffClaimed)
		return noResult, nil
	}
	var res any
	if h.err == nil {
		res = h.value
	}
	err := h.err
	h.clear()
	return res, err
}

// clear empties the handoff.
func (h *Handoff[T]) clear() {
	var zero T
	h.value, h.err = zero, nil
	h.state.Store(handoffEmpty)
}

// claimed returns the value a blind wait was notified of (noResult) and
// empties the handoff: only that wait calls it, after its notification.
func (h *Handoff[T]) claimed() T {
	v := h.value
	h.clear()
	return v
}

// Outcome returns the outcome the handoff keeps, without taking it; ok is
// false when it keeps none. Reading it counts as handling its error.
func (h *Handoff[T]) Outcome() (v T, ok bool, err error) {
	if !h.usable() || h.state.Load() != handoffKept {
		return v, false, nil
	}
	h.observed()
	return h.value, true, h.err
}

// Await waits for the next outcome (or takes the kept one), ctx's end or
// the owner's Close, and returns its value and error (see the package
// function Await for the rules of waiting).
func (h *Handoff[T]) Await(ctx context.Context) (T, error) {
	if !h.usable() {
		var zero T
		return zero, ErrNilEvent
	}
	return awaitValue[T](ctx, h)
}

func (o *handoffOps[T]) Owner() Owner   { return o.owner }
func (o *handoffOps[T]) Event() Event   { return (*Handoff[T])(o) }
func (o *handoffOps[T]) Arm() error     { return nil }
func (o *handoffOps[T]) Disarm()        {}
func (o *handoffOps[T]) Free(free bool) { o.subscribed(false) }

// OwnerClosed is the close of a held handoff by its owner's Close.
func (o *handoffOps[T]) OwnerClosed(why error) { (*Handoff[T])(o).close(why) }

// subscribed holds the handoff in its owner's Close while it has
// subscribers, and gives a new subscriber the outcome kept for nobody.
func (o *handoffOps[T]) subscribed(any bool) {
	if any && o.state.Load() == handoffKept {
		o.owner.Post((*Handoff[T])(o).deliver) // after the subscription, not inside it
	}
	holdWhileSubscribed(o.owner, o, &o.held, any)
}

// Stored is the kept outcome (eventkind.Replayer); holds and take make a
// replay take it (see taker).
func (o *handoffOps[T]) Stored() (any, error, bool) {
	if o.state.Load() != handoffKept {
		return nil, nil, false
	}
	if o.err != nil {
		return nil, o.err, true
	}
	return o.value, nil, true
}

func (o *handoffOps[T]) holds() bool { return o.state.Load() == handoffKept }

func (o *handoffOps[T]) takeStored(blind bool) (any, error, bool) {
	if !o.holds() {
		return nil, nil, false
	}
	res, err := (*Handoff[T])(o).take(blind)
	return res, err, true
}

func (o *handoffOps[T]) Describe() string {
	closed := ""
	if o.has(Closed) {
		closed = ", closed"
	}
	switch {
	case o.state.Load() != handoffKept:
		return "Handoff(empty" + closed + ")"
	case o.err != nil:
		return fmt.Sprintf("Handoff(holding an error: %v%s)", o.err, closed)
	default:
		return "Handoff(holding a value" + closed + ")"
	}
}
