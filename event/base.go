package event

import (
	"bytes"
	"errors"
	"fmt"
	"runtime/debug"
	"strconv"
	"sync/atomic"

	"github.com/uvevent/uvevent/internal/caller"
	"github.com/uvevent/uvevent/refcount"
)

// Event is the interface every asynchronous primitive implements: timers,
// polls, signals, processes, I/O, futures, goroutines run by a reactor, and
// the rest of the hierarchy. A waker can wait on any mix of them.
//
// Every method is safe to call from any goroutine. Called from the event's
// loop goroutine (inside a callback) it runs at once; from elsewhere it runs
// on the loop and returns when done.
type Event interface {
	// AddCallback subscribes cb; the event holds a reference to it until it
	// is removed or the event closes. It returns ErrClosed on a closed event,
	// even one that stores a result: it is the model's primitive, which
	// only subscribes, and a closed event holds no subscribers. Replay
	// delivers a stored result; Subscribe, On and the waits do both, so
	// that a late subscriber of a completed future, process or lookup
	// hears its outcome.
	AddCallback(cb *Callback) error
	// DelCallback unsubscribes cb and releases the event's reference to it.
	DelCallback(cb *Callback) error
	// Start activates the event in its loop. Starting a started event only
	// counts; it returns ErrClosed on a closed event.
	Start() error
	// Stop undoes one Start; the last one deactivates the event. Stopping an
	// event that is not started does nothing.
	Stop() error
	// Replay delivers the stored result to cb now, for events that store one
	// (futures, goroutines, ...); others return ErrNotReplayable.
	Replay(cb *Callback) error
	// Close stops the event, closes it and tells the subscribers with
	// ErrClosed. Closing a closed event does nothing.
	Close() error
	// Retain adds a reference to the event. After the last Dispose there
	// is nothing to retain: Base refuses it and reports ErrReleased.
	Retain()
	// Dispose drops a reference; the last one closes the event and frees
	// what it holds.
	Dispose()
	// Info describes the event in one line, e.g. "Timer(timeout=50ms, periodic)".
	Info() string
	// Flags returns the event's flags.
	Flags() Flags
	// SetNotifyHook installs h to intercept notifications (nil removes it).
	SetNotifyHook(h NotifyHook) error

	base() *Base
}

// NotifyHook intercepts a notification before the callbacks see it. It may
// change the result and the error; it returns pass=false to swallow the
// notification. Timeouts use it to turn a timer firing into ErrTimeout.
type NotifyHook func(ev Event, result any, err error) (any, error, bool)

// State is an event's place in its lifecycle.
type State uint8

// The lifecycle: Created → Active → Fired → (Active again for periodic
// events | Closed for one-shot ones); Stopped can be started again; Closed is
// final.
const (
	Created State = iota
	Active
	Fired
	Stopped
	StateClosed
)

var stateNames = [...]string{"created", "active", "fired", "stopped", "closed"}

// String names the state: "created", "active", "fired", "stopped", "closed".
func (s State) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return "State(" + strconv.Itoa(int(s)) + ")"
}

// kindOps is what a kind of event adds to Base (eventkind.Ops, which
// documents each method): how to arm and disarm it, how to free it and how
// to describe it. Every method is called with the owner held.
type kindOps interface {
	// Owner returns the loop the event belongs to.
	Owner() Owner
	// Event returns the event itself, as callbacks should see it.
	Event() Event
	// Arm activates the underlying handle (the first Start). A one-shot
	// event that can complete at once may call Complete from Arm: Start
	// then leaves it closed, not started.
	Arm() error
	// Disarm deactivates it (the last Stop, or Close).
	Disarm()
	// Free releases what the kind holds, once, when the event has closed
	// and its last notification is delivered. free is false when
	// NoFreeMemory is set: the memory belongs to someone else.
	Free(free bool)
	// Describe returns the event's Info line.
	Describe() string
}

// replayer is implemented by the ops of kinds that store a result
// (eventkind.Replayer).
type replayer interface {
	// Stored returns the stored result; ok is false while there is none.
	Stored() (result any, err error, ok bool)
}

// Base is the common part of every event. Kinds embed it and call
// eventkind.Init.
// Its fields are touched only with the owner held, except the flags, which
// are atomic.
//
// Its size matters (a million armed timers are a million Bases), so the
// lifecycle state is derived rather than stored: see State.
type Base struct {
	ops      kindOps
	flags    atomic.Uint32
	refs     refcount.Count
	loopRefs int32
	iter     int32 // the running pass's next index; -1 outside a pass, iterFreed once released
	cbs      vector
	ext      *extras
}

// extras holds what few events use, so that Base stays small.
type extras struct {
	hook   NotifyHook
	object any
	fd     int
	seen   *atomic.Bool // set when the outcome is observed (see Future)
}

// initBase prepares b for a kind (eventkind.Init).
func initBase(b *Base, ops kindOps, loop bool, flags Flags) {
	if b == nil {
		return
	}
	b.ops = ops
	b.iter = -1
	if loop {
		flags |= loopEvent
	}
	b.flags.Store(uint32(flags))
}

func (b *Base) base() *Base { return b }

const iterFreed = -2 // see released: no pass runs after it

// notifying reports whether a notification pass over b is running.
func (b *Base) notifying() bool { return b.iter >= 0 }

// state derives the lifecycle state: Closed from the flag, Fired during a
// pass, Active while started, Stopped once started and stopped, else Created.
func (b *Base) state() State {
	switch f := Flags(b.flags.Load()); {
	case f&Closed != 0:
		return StateClosed
	case b.iter >= 0:
		return Fired
	case b.loopRefs > 0:
		return Active
	case f&startedOnce != 0:
		return Stopped
	}
	return Created
}

// unusable reports whether b is nil (a nil event of a kind that embeds its
// Base first) or a zero value no kind has initialised.
func (b *Base) unusable() bool { return b == nil || b.ops == nil }

// exec runs fn with the owner held.
func (b *Base) exec(fn func()) error {
	if b.unusable() {
		return ErrNilEvent // nil, or a zero value: no kind made it
	}
	o := b.ops.Owner()
	if o.Owned() {
		fn()
		return nil
	}
	return o.Call(fn)
}

// do runs f(b) with the owner held. On the loop goroutine it is a plain
// call: the closure that carries f elsewhere is built only on that path, so
// the hot path allocates nothing.
func (b *Base) do(f func(*Base) error) error {
	if b.unusable() {
		return ErrNilEvent // nil, or a zero value: no kind made it
	}
	o := b.ops.Owner()
	if o.Owned() {
		return f(b)
	}
	var err error
	if e := o.Call(func() { err = f(b) }); e != nil {
		return e
	}
	return err
}

// doCB is do for the methods taking a callback.
func (b *Base) doCB(f func(*Base, *Callback) error, cb *Callback) error {
	if b.unusable() {
		return ErrNilEvent // nil, or a zero value: no kind made it
	}
	o := b.ops.Owner()
	if o.Owned() {
		return f(b, cb)
	}
	var err error
	if e := o.Call(func() { err = f(b, cb) }); e != nil {
		return e
	}
	return err
}

// Flags returns the event's flags.
func (b *Base) Flags() Flags {
	if b == nil {
		return 0
	}
	return Flags(b.flags.Load()) &^ privateFlags
}

func (b *Base) has(f Flags) bool   { return Flags(b.flags.Load())&f != 0 }
func (b *Base) setFlags(f Flags)   { b.flags.Or(uint32(f)) }
func (b *Base) clearFlags(f Flags) { b.flags.And(^uint32(f)) }
func (b *Base) active() bool       { return b.loopRefs > 0 }
func (b *Base) countsActive() bool { return b.has(loopEvent) && !b.has(Hidden) }
func (b *Base) owner() Owner       { return b.ops.Owner() }

// AddCallback subscribes cb. See Event.
func (b *Base) AddCallback(cb *Callback) error { return b.doCB((*Base).addCallback, cb) }

func (b *Base) addCallback(cb *Callback) error {
	if !cb.usable() {
		return ErrNilCallback
	}
	if b.has(Closed) {
		return ErrClosed
	}
	if !cb.hold() {
		return misuse("AddCallback of a released callback")
	}
	b.cbs.add(cb)
	b.observed()
	if !cb.wait {
		if s, ok := b.ops.(subscribedOps); ok {
			s.subscribed(true)
		}
	}
	if w, ok := b.ops.(subscriptionWatcher); ok {
		w.Subscribed()
	}
	return nil
}

// DelCallback unsubscribes cb. See Event.
func (b *Base) DelCallback(cb *Callback) error { return b.doCB((*Base).delCallback, cb) }

func (b *Base) delCallback(cb *Callback) error {
	i := b.cbs.index(cb)
	if i < 0 {
		return ErrNotSubscribed
	}
	b.cbs.remove(i, &b.iter)
	b.releaseCallback(cb)
	if !cb.wait && !b.has(Closed) {
		if s, ok := b.ops.(subscribedOps); ok && !b.subscribers() {
			s.subscribed(false)
		}
	}
	if w, ok := b.ops.(unsubscriptionWatcher); ok && !b.has(Closed) {
		w.Unsubscribed()
	}
	return nil
}

// releaseCallback drops the event's reference to cb; a panicking OnDispose
// is reported to the owner, never raised out of Close, Dispose or a run.
func (b *Base) releaseCallback(cb *Callback) {
	switch err := cb.release(); {
	case errors.Is(err, ErrReleased):
		report(b.owner(), b.ops.Event(), "callback released more often than retained", err)
	case err != nil:
		report(b.owner(), b.ops.Event(), "callback's OnDispose panicked", err)
	}
}

// Start activates the event. See Event.
func (b *Base) Start() error { return b.do((*Base).start) }

func (b *Base) start() error {
	if b.has(Closed) {
		return ErrClosed
	}
	if !b.has(loopEvent) {
		return nil
	}
	if b.loopRefs > 0 {
		b.loopRefs++
		return nil
	}
	if err := b.ops.Arm(); err != nil {
		return err
	}
	if b.has(Closed) {
		return nil // Arm completed the one-shot event at once (a channel op that matched)
	}
	b.loopRefs = 1
	if !b.has(startedOnce) {
		b.setFlags(startedOnce)
	}
	if b.countsActive() {
		activeDelta(b.ops.Owner(), 1)
	}
	return nil
}

// Stop undoes one Start. See Event.
func (b *Base) Stop() error { return b.do((*Base).stopOne) }

func (b *Base) stopOne() error {
	if h, ok := b.ops.(startHolder); ok && int(b.loopRefs) <= h.HeldStarts() {
		return nil // only Starts its kind holds are left: not the caller's to undo
	}
	b.stop(false)
	return nil
}

// stop drops one loop reference, or all of them when all is true.
func (b *Base) stop(all bool) {
	if b.loopRefs == 0 {
		return
	}
	b.loopRefs--
	if all {
		b.loopRefs = 0
	}
	if b.loopRefs > 0 {
		return
	}
	b.ops.Disarm()
	if b.countsActive() {
		activeDelta(b.ops.Owner(), -1)
	}
}

// Close closes the event. See Event. Closing a closed event does nothing
// and returns nil, even when its owner is gone (a reactor already closed).
func (b *Base) Close() error {
	if b.unusable() {
		return ErrNilEvent
	}
	if b.has(Closed) {
		return nil
	}
	return b.do((*Base).closeNow)
}

func (b *Base) closeNow() error {
	b.close(ErrClosed)
	return nil
}

// close stops and closes the event, telling the subscribers still present
// why. Closing a closed event does nothing.
func (b *Base) close(why error) {
	if b.has(Closed) {
		return
	}
	b.finish(nil, why, b.cbs.len() > 0)
}

// finish closes the event and, when tell is set, delivers (result, err) as
// the last notification. Subscribers are released after that pass; when
// finish runs inside a pass over this event, the running pass delivers its
// notification to the rest of them and releases them at its end.
func (b *Base) finish(result any, err error, tell bool) {
	b.stop(true)
	b.setFlags(Closed)
	if b.notifying() {
		return
	}
	if tell {
		b.notify(b.ops.Event(), result, err)
	} else {
		b.released()
	}
}

// released lets go of everything a closed event still holds: its
// subscribers, what the kind holds, then its descriptor if CloseFD is set.
// It runs once.
func (b *Base) released() {
	if b.iter == iterFreed {
		return
	}
	b.iter = iterFreed // not a flag: only the owner reads it, and an atomic costs
	b.cbs.clear(b.releaseCallback)
	// The kind lets go first: a poll removes the descriptor from libuv's
	// epoll set (uv_close), which it cannot do once the number is closed
	// and perhaps reused.
	b.ops.Free(!b.has(NoFreeMemory))
	if b.ext != nil && b.has(CloseFD) {
		closeFD(b.ext.fd)
		b.clearFlags(CloseFD)
	}
}

// Retain adds a reference to the event.
//
// Retaining an event whose references are all gone (after its last
// Dispose) is a bug in the program, not a condition to handle: the event is
// closed either way. So Retain keeps its place in the model (no error
// result, one signature for every kind and every Event written outside the
// module) and, rather than panic, does nothing and reports the misuse to
// the event's owner (a reactor's Options.OnReport, or log/slog) with an
// error matching ErrReleased that names the line that called it.
func (b *Base) Retain() {
	if b.unusable() || b.refs.TryRetain() {
		return
	}
	// The report is made with the owner held, as every report is (a
	// reactor's OnReport runs on its loop): Retain may come from any
	// goroutine. An owner that is gone takes it from any goroutine.
	o, ev, err := b.owner(), b.ops.Event(), misuse("Retain")
	const msg = "Retain after the event's last Dispose"
	if o.Owned() || o.Post(func() { report(o, ev, msg, err) }) != nil {
		report(o, ev, msg, err)
	}
}

// misuse is ErrReleased for a call of op, naming the caller's line.
func misuse(op string) error {
	if site := caller.Site(); site != "" {
		return fmt.Errorf("%w (%s at %s)", ErrReleased, op, site)
	}
	return fmt.Errorf("%w (%s)", ErrReleased, op)
}

// Dispose drops a reference; the last one closes and frees the event.
// Disposing an event whose references are all gone does nothing.
func (b *Base) Dispose() {
	if b.unusable() {
		return
	}
	if last, _ := b.refs.TryRelease(); !last {
		return // not the last reference, or released already (a no-op)
	}
	b.do((*Base).release)
}

func (b *Base) release() error {
	b.close(ErrClosed)
	if r, ok := b.ops.(replayer); ok {
		if res, err, ok := r.Stored(); ok {
			ev := b.ops.Event()
			if err != nil && !b.has(ErrorCaught|ErrorHandled) {
				report(b.owner(), ev, "unhandled error", err)
				b.setFlags(ErrorCaught) // the report took it: its maker says no more
			} else if err == nil && res != nil && !b.has(ResultUsed) {
				report(b.owner(), ev, "result never used", nil)
			}
		}
	}
	// Whatever was to be said is said: the collector's report (see
	// Future) must not repeat it.
	if b.ext != nil && b.ext.seen != nil {
		b.ext.seen.Store(true)
	}
	return nil
}

// taker is the Ops of a kind whose stored outcome goes to one taker (a
// Handoff): a replay takes it, and the kind is empty again. With blind, a
// value may be left where it is for the taker to read (see
// Handoff.claimed), the result then being noResult. The owner is held.
type taker interface {
	holds() bool
	takeStored(blind bool) (result any, err error, ok bool)
}

// settledIdle reports an open event that is not started and holds an
// outcome to replay (a one-shot timer stopped by its firing): a wait gets
// that outcome rather than starting it again. The owner is held.
func (b *Base) settledIdle() bool {
	if b.loopRefs > 0 {
		return false
	}
	if t, ok := b.ops.(taker); ok {
		return t.holds()
	}
	r, ok := b.ops.(replayer)
	if !ok {
		return false
	}
	_, _, ok = r.Stored()
	return ok
}

// Replay delivers the stored result to cb. See Event.
func (b *Base) Replay(cb *Callback) error { return b.doCB((*Base).replay, cb) }

func (b *Base) replay(cb *Callback) error {
	if !cb.usable() {
		return ErrNilCallback
	}
	r, ok := b.ops.(replayer)
	if !ok {
		return ErrNotReplayable
	}
	var res any
	var rerr error
	if t, takes := b.ops.(taker); takes {
		res, rerr, ok = t.takeStored(cb.blind && (b.ext == nil || b.ext.hook == nil))
	} else {
		res, rerr, ok = r.Stored()
	}
	if !ok {
		return ErrNotReplayable
	}
	if b.ext != nil && b.ext.hook != nil && !b.has(Closed) {
		// An open event's stored outcome is its last notification (a
		// fired one-shot timer's): replayed as the hook let it through
		// then (an async.Timeout's firing is its timeout error).
		var pass bool
		if res, rerr, pass = b.runHook(b.ops.Event(), res, rerr); !pass {
			return ErrNotReplayable
		}
	}
	b.observed()
	b.call(b.ops.Event(), cb, b.deliverable(res), rerr)
	return nil
}

// observed records that someone takes the outcome: a subscriber, a replay,
// or a read of a future's Outcome.
func (b *Base) observed() {
	if f := ResultUsed | ErrorCaught; Flags(b.flags.Load())&f != f { // a load costs less than an Or
		b.setFlags(f)
	}
	if b.ext != nil && b.ext.seen != nil {
		b.ext.seen.Store(true)
	}
}

// deliverable returns the result as callbacks get it: with ValueResult, a
// []byte is copied so that they may keep it.
func (b *Base) deliverable(result any) any {
	if p, ok := result.([]byte); ok && b.has(ValueResult) {
		return bytes.Clone(p)
	}
	return result
}

// Info describes the event. See Event.
func (b *Base) Info() string {
	var s string
	if err := b.exec(func() { s = b.ops.Describe() }); err != nil {
		return "event(" + err.Error() + ")"
	}
	return s
}

// SetNotifyHook installs or removes the notify hook.
func (b *Base) SetNotifyHook(h NotifyHook) error {
	return b.exec(func() { b.extras().hook = h })
}

func (b *Base) extras() *extras {
	if b.ext == nil {
		b.ext = &extras{fd: -1}
	}
	return b.ext
}

// SetObject records an owning object (sets ObjectRef); Object returns it.
func (b *Base) SetObject(o any) error {
	return b.exec(func() {
		b.extras().object = o
		b.setFlags(ObjectRef)
	})
}

// Object returns the owning object recorded by SetObject, or nil.
func (b *Base) Object() any {
	var o any
	b.exec(func() {
		if b.has(ObjectRef) {
			o = b.ext.object
		}
	})
	return o
}

// SetHidden marks the event hidden (or not), moving it out of (or into) the
// active count if it is active now: libuv's uv_unref and uv_ref, Node's
// unref() and ref(). A hidden started event does not keep Run going, and
// still delivers while something else keeps the loop turning.
func (b *Base) SetHidden(hidden bool) error {
	return b.exec(func() {
		if hidden == b.has(Hidden) {
			return
		}
		counted := b.active() && b.countsActive()
		if hidden {
			b.setFlags(Hidden)
		} else {
			b.clearFlags(Hidden)
		}
		if now := b.active() && b.countsActive(); now != counted {
			if now {
				activeDelta(b.owner(), 1)
			} else {
				activeDelta(b.owner(), -1)
			}
		}
	})
}

// MarkErrorHandled sets ErrorHandled: the error was dealt with at its source.
func (b *Base) MarkErrorHandled() {
	if !b.unusable() {
		b.setFlags(ErrorHandled)
	}
}

// notify runs one notification pass. It refuses a nested pass of the same
// event.
func (b *Base) notify(ev Event, result any, err error) error {
	if b.notifying() {
		return ErrNestedNotify
	}
	if b.slowPass(err) {
		var pass bool
		if result, err, pass = b.prelude(ev, result, err); !pass {
			if b.has(Closed) {
				b.released()
			}
			return nil
		}
	}
	b.iter = 0
	b.pass(ev, result, err)
	b.endPass()
	return nil
}

// slowPass reports whether a pass has a prelude to run: a hook, an error to
// report or a value result to copy. Most have none, and notifyKind goes
// straight to the pass.
func (b *Base) slowPass(err error) bool {
	return b.ext != nil || err != nil || b.has(ValueResult)
}

// prelude runs what comes before a pass that has a hook, an error or a
// value result: the hook (which may swallow the notification: pass false),
// the copy of a value result, and the report of an error nobody hears.
func (b *Base) prelude(ev Event, result any, err error) (any, error, bool) {
	if b.ext != nil && b.ext.hook != nil {
		var pass bool
		if result, err, pass = b.runHook(ev, result, err); !pass {
			return result, err, false
		}
	}
	result = b.deliverable(result)
	if err != nil && b.cbs.len() == 0 && !b.has(ErrorCaught|ErrorHandled) {
		if _, replayable := b.ops.(replayer); !replayable {
			report(b.owner(), ev, "unhandled error", err)
		}
	}
	return result, err, true
}

// runHook calls the notify hook. A panicking hook is reported and the
// notification passes on unchanged.
func (b *Base) runHook(ev Event, result any, err error) (r any, e error, pass bool) {
	finished := false
	defer func() {
		if p := recover(); p != nil {
			report(b.owner(), ev, "notify hook panicked", &PanicError{Value: p, Stack: debug.Stack()})
			r, e, pass = result, err, true
		} else if !finished {
			// runtime.Goexit in the hook: the notification ends here, and a
			// closed event still lets go of what it holds (as pass does).
			if b.has(Closed) {
				b.released()
			}
			report(b.owner(), ev, "notify hook called runtime.Goexit", nil)
		}
	}()
	r, e, pass = b.ext.hook(ev, result, err)
	finished = true
	return r, e, pass
}

// pass calls the callbacks from b.iter on. One deferred recover serves the
// whole pass: when a callback panics, the panic is reported and the pass goes
// on from the next callback (b.iter already points at it), so the cost of
// recovering is paid per pass, not per callback. Its caller sets b.iter to 0
// before and calls endPass after.
//
// A callback that calls runtime.Goexit (t.Fatal does) ends the goroutine:
// nothing can stop that, but the event is left out of its pass (not Fired
// for good), released if it closed, and the exit is reported.
func (b *Base) pass(ev Event, result any, err error) {
	finished := false
	defer func() {
		if finished {
			return // no recover needed: it costs, even with nothing to recover
		}
		if p := recover(); p != nil {
			report(b.owner(), ev, "callback panicked", &PanicError{Value: p, Stack: debug.Stack()})
			b.pass(ev, result, err)
		} else {
			b.endPass()
			report(b.owner(), ev, "callback called runtime.Goexit", nil)
		}
	}()
	v := &b.cbs
	for {
		s := v.all() // again each time: a callback may add or remove
		if int(b.iter) >= len(s) {
			break
		}
		cb := s[b.iter]
		b.iter++
		cb.fn(ev, result, err)
	}
	finished = true
}

// endPass ends a notification pass, and releases the event if it closed
// meanwhile.
func (b *Base) endPass() {
	b.iter = -1
	if b.has(Closed) {
		b.released()
	}
}
