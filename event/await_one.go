package event

import (
	"context"

	"github.com/uvevent/uvevent/internal/waiting"
)

// This file is Await's fast path: a cooperative coroutine that waits, with
// its own context, on one event of the reactor whose baton it holds — the
// commonest wait of all (f.Await(ctx) in a coroutine). It keeps every rule
// of Await: the event is started and stopped, a closed one is replayed (and
// a wait that this satisfies returns without giving the baton back), the
// wait ends on the owner, and the coroutine's reactor knows the wait
// (BeginWait, EndWait). It skips what cannot apply: the reactor ends the
// coroutine's waits itself when it closes (no registration), the
// coroutine watches its own context (nothing to arm), and there is no
// bound. Its waker is the one of the coroutine's previous wait, kept in the
// coroutine's spare, so that the wait allocates nothing.

// reuser is a parker that keeps a waker between its waits: it waits on one
// thing at a time, from one goroutine.
type reuser interface {
	parker
	Covers(o Owner) bool
	Spare() *waiting.Spare
}

// awaitOne is Await(ctx, Any(), ev) when the fast path applies; ok is false
// when it does not, and then nothing has happened: Await does the wait.
func awaitOne(ctx context.Context, ev Event) (o Outcome, err error, ok bool) {
	if ctx == nil || isNil(ev) {
		return o, nil, false
	}
	pk, _ := waiting.From(ctx).(reuser)
	if pk == nil || ctx.Done() != pk.Done() || !pk.Parks() {
		return o, nil, false
	}
	t := Deref(ev)
	if isNil(t) {
		return o, nil, false
	}
	if own := t.base().owner(); !own.Owned() || !pk.Covers(own) {
		return o, nil, false
	}
	select {
	case <-pk.Done():
		// A coroutine whose context has ended takes the general path: the
		// end of that context may still be aborting its last wait, whose
		// waker must then not be reused.
		return o, nil, false
	default:
	}
	spare := pk.Spare()
	w, _ := spare.Take().(*waker)
	if w == nil {
		w = newWaker(ctx, Any(), 1, false)
	} else {
		w.reuse(ctx)
	}
	w.slots[0].target = t
	w.outs[0] = Outcome{Index: 0, Event: ev}
	w.subscribe()
	if !w.isDone() {
		pk.BeginWait(w.targets(), w)
		w.done0 = pk.Done() // the context is the coroutine's: Arm watches nothing
		pk.Park(w)
		pk.EndWait()
	}
	w.unsubscribe()
	w.mu.Lock()
	o, err = w.outs[0], w.err
	w.mu.Unlock()
	if pk.Parks() {
		// The wait ended with the owner held again: the waker is off its
		// event, and nothing refers to it any more.
		spare.Put(w)
	} else {
		w.cbv.Release()
	}
	return o, err, true
}

// reuse readies w, the waker of a finished wait on one event, for the next
// one. Everything goes back to zero but the callback's function (a method
// value: making it again would allocate); the callback keeps its creator's
// reference, the only one left.
func (w *waker) reuse(ctx context.Context) {
	fn := w.cbv.fn
	*w = waker{mode: Any(), ctx: ctx}
	w.outs, w.slots = w.inline.outs[:1], w.inline.slots[:1]
	w.cbv.fn = fn
}
