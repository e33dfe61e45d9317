package event

import (
	"context"
	"sync/atomic"

	"github.com/uvevent/uvevent/internal/waiting"
)

// This file is Await's fast path: a cooperative coroutine that waits, with
// its own context, on one event of the reactor whose baton it holds — the
// commonest wait of all (f.Await(ctx) in a coroutine). It keeps every rule
// of Await: the event is started and stopped, a closed one is replayed (and
// a wait that this satisfies returns without giving the baton back), the
// wait ends on the owner, and the coroutine's reactor knows the wait
// (BeginWait, EndWait). It leaves out what cannot apply: the reactor ends
// the coroutine's waits itself when it closes (no registration), the
// coroutine watches its own context (nothing to arm), there is no bound and
// one outcome. Its state, a parked, is the one of the coroutine's previous
// wait, kept in the coroutine's spare: the wait allocates nothing.

// reuser is a parker that keeps a wait's state between its waits: it waits
// on one thing at a time, from one goroutine. Its waits on one event of its
// own reactor go through ParkOne instead of BeginWait, Park and EndWait.
type reuser interface {
	parker
	Covers(o Owner) bool
	Spare() *waiting.Spare
	// Wake returns the function that makes the coroutine ready again.
	Wake() func()
	// ParkOne records the wait ws on events (for the deadlock check, and
	// for the end of the coroutine's context, which aborts it), gives the
	// baton back until the wait has called Wake's function and the baton
	// is lent again, and ends the record. It reports whether the coroutine
	// holds the baton again (not when the reactor has closed meanwhile).
	ParkOne(events []Event, ws waiting.State) (held bool)
}

// parked is the state of a fast-path wait. Wait number n ends when ended
// goes from n-1 to n: whoever does that — the event's callback, an Abort —
// writes the outcome, takes the wait off its event if it holds the owner,
// and resumes the coroutine; everyone else finds the wait over. The
// coroutine reads the outcome after it has resumed (the baton's hand-off
// orders it after those writes). The event, the callback and the flags
// saying what the wait did to the event (subbed, started) are touched with
// the owner held only.
type parked struct {
	cb      Callback // pinned: subscribed without a reference count
	targets [1]Event // the event, as the coroutine's record of the wait gets it
	// What an Abort reads: set before the wait is recorded, and changed
	// only when the state is reused, which no Abort can reach (see awaitOne).
	owner Owner
	ctx   context.Context
	n     uint32
	armed bool   // the coroutine has parked: the end of the wait calls wake
	wake  func() // the coroutine's (a state serves one coroutine)
	ended atomic.Uint32

	subbed  bool // cb is in the event's callbacks
	started bool // the wait started the event (a counted Start)
	// The outcome: the event's notification (notified, result, and err,
	// which is then the event's error too), or err from an Abort.
	notified bool
	unboxed  bool // the result was noResult
	result   any
	err      error
}

// awaitOne is Await(ctx, Any(), ev) when the fast path applies: notified
// and result are those of the Outcome (whose Err is err when notified), err
// the wait's error. ok is false when it does not apply, and then nothing
// has happened: Await does the wait. The caller has checked that ctx and ev
// are not nil. With blind set, the caller reads a future's value itself: a
// future then notifies noResult rather than box its value.
func awaitOne(ctx context.Context, ev Event, blind bool) (result any, notified bool, err error, ok bool) {
	pk, _ := waiting.From(ctx).(reuser)
	if pk == nil || ctx.Done() != pk.Done() || !pk.Parks() {
		return nil, false, nil, false
	}
	b := ev.base()
	if b.has(Reference) {
		return nil, false, nil, false // Await follows the reference
	}
	own := b.owner()
	if !own.Owned() || !pk.Covers(own) {
		return nil, false, nil, false
	}
	select {
	case <-pk.Done():
		// A coroutine whose context has ended takes the general path: the
		// end of that context may still be aborting its last wait, whose
		// state must then not be reused.
		return nil, false, nil, false
	default:
	}
	spare := pk.Spare()
	w, _ := spare.Take().(*parked)
	if w == nil {
		w = &parked{wake: pk.Wake()}
		w.cb.fn, w.cb.pinned, w.cb.wait, w.cb.park = w.on, true, true, w
	}
	// Pointers are written only when they change: each write costs a write
	// barrier while the collector marks, and the collector marks often
	// when coroutines allocate.
	w.targets[0] = ev
	if w.owner != own {
		w.owner = own
	}
	if w.ctx != ctx {
		w.ctx = ctx
	}
	w.n++
	w.armed, w.notified, w.unboxed, w.cb.blind = false, false, false, blind
	w.subscribe(b)
	held := true
	if w.ended.Load() != w.n {
		w.armed = true
		held = pk.ParkOne(w.targets[:], w)
	}
	result, notified, err = w.result, w.notified, w.err
	if w.unboxed {
		result = noResult
	}
	if w.subbed {
		// The wait ended without its owner held (it was aborted once the
		// reactor had closed): off the event as Await would do it.
		b.exec(w.unsubscribe)
	}
	w.targets[0] = nil // hold on to nothing between waits
	if w.result != nil || w.err != nil {
		w.result, w.err = nil, nil
	}
	if !w.subbed && held {
		spare.Put(w) // off its event, held by nothing else: reusable
	}
	return result, notified, err, true
}

// subscribe replays a closed event (or a stopped one holding an outcome:
// settledIdle), or subscribes to an open one and starts it when it lives
// in a loop; the owner is held.
func (w *parked) subscribe(b *Base) {
	if b.has(Closed) || b.settledIdle() {
		if b.replay(&w.cb) != nil {
			w.on(w.targets[0], nil, ErrClosed)
		}
		return
	}
	b.addCallback(&w.cb) // it cannot fail: cb has its function, b is open
	w.subbed = true
	if b.has(loopEvent) {
		w.started = b.startWaited(w.on, w.targets[0], &w.subbed)
	}
}

// unsubscribe takes the wait off its event and stops the event if the wait
// started it; the owner is held.
func (w *parked) unsubscribe() {
	if !w.subbed {
		return
	}
	b := w.targets[0].base()
	b.delCallback(&w.cb)
	if w.started {
		b.stop(false)
	}
	w.subbed, w.started = false, false
}

// on is the callback, run with the owner held: the event's notification
// ends the wait.
func (w *parked) on(ev Event, result any, err error) {
	if !w.ended.CompareAndSwap(w.n-1, w.n) {
		return
	}
	if err != nil && ev.Flags().Has(ErrorHandled) {
		err = nil
	}
	w.notified, w.err = true, err
	if _, none := result.(noValue); none {
		w.unboxed = true // noResult, without writing its pointer
	} else {
		w.result = result
	}
	w.finish(true)
}

// claim ends the wait for a handoff's direct delivery (Handoff.deliver),
// with the owner held; false when the wait is over already.
func (w *parked) claim() bool { return w.ended.CompareAndSwap(w.n-1, w.n) }

// handedOver completes a wait that claim ended: b, its event, left it a
// value to read (noResult), and no notification pass runs. The wait is
// b's one subscriber and started nothing (a handoff is no loop event): off
// b, the coroutine made ready. The owner is held.
func (w *parked) handedOver(b *Base) {
	w.notified, w.unboxed = true, true
	b.cbs.remove(0, &b.iter)
	w.subbed = false
	if w.armed {
		w.wake()
	}
}

// finish acts on the end of the wait: off its event when the owner is held
// (held), then the coroutine is made ready if it has parked.
func (w *parked) finish(held bool) {
	if held {
		w.unsubscribe()
	}
	if w.armed {
		w.wake()
	}
}

// Abort implements waiting.State: the wait ends with err, on its owner.
func (w *parked) Abort(err error) {
	o := w.owner
	held := o.Owned()
	if !held {
		if o.Post(func() { w.abortHeld(true, err) }) == nil {
			return
		}
	}
	w.abortHeld(held, err) // the owner is gone when not held: nothing can notify
}

func (w *parked) abortHeld(held bool, err error) {
	if w.ended.CompareAndSwap(w.n-1, w.n) {
		w.err = err
		w.finish(held)
	}
}

// Done implements waiting.State: a wait whose context is done is over, even
// before its goroutine has woken to see it.
func (w *parked) Done() bool { return w.ended.Load() == w.n || w.ctx.Err() != nil }

// Bounded implements waiting.State: the fast path has no bound.
func (w *parked) Bounded() bool { return false }
