package event

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/uvevent/uvevent/internal/waiting"
)

// Mode says when a wait is over. Build one with Any, All, FirstSuccess or
// AtLeast, optionally bounded with Within and made tolerant of errors with
// IgnoreErrors. The zero Mode is none of them: Await refuses it with
// ErrBadMode.
//
// Without IgnoreErrors the first error ends the wait with that error
// (FirstSuccess excepted: it exists to tolerate errors). With it, an
// event's error is recorded in its Outcome and the wait goes on. All then
// ends when every event has notified, with a nil error: the events' errors
// are in the outcomes only (AwaitAllSettled gives them by position).
// FirstSuccess and AtLeast end when enough events have succeeded, or when
// every event has notified and that can no longer happen, and then with an
// error that joins the events'.
type Mode struct {
	kind    modeKind
	ignore  bool
	n       int
	timeout time.Duration
}

type modeKind uint8

const (
	modeAny modeKind = iota + 1 // the zero Mode is none: Await refuses it
	modeAll
	modeFirstSuccess
	modeAtLeast
)

// Any ends the wait at the first event to notify, success or error. With
// IgnoreErrors it is FirstSuccess.
func Any() Mode { return Mode{kind: modeAny} }

// All ends the wait when every event has notified, or at the first error.
// With IgnoreErrors it waits for every event and returns no event's error.
func All() Mode { return Mode{kind: modeAll} }

// FirstSuccess ends the wait at the first event to notify without error;
// when all have failed, the wait's error joins theirs. Errors never end it
// early, with or without IgnoreErrors.
func FirstSuccess() Mode { return Mode{kind: modeFirstSuccess, ignore: true} }

// AtLeast ends the wait when n events have succeeded, or at the first
// error. With IgnoreErrors it goes on past errors and ends, with their
// joined error, as soon as n successes can no longer happen.
func AtLeast(n int) Mode { return Mode{kind: modeAtLeast, n: n} }

// IgnoreErrors makes the events' errors outcomes, not the end of the wait.
func (m Mode) IgnoreErrors() Mode {
	m.ignore = true
	return m
}

// Within bounds the wait: after d it ends with a *TimeoutError (matching
// ErrTimeout and context.DeadlineExceeded).
func (m Mode) Within(d time.Duration) Mode {
	m.timeout = d
	return m
}

// Outcome is one event's part in a wait, at the event's position in the
// Await call.
type Outcome struct {
	Index  int   // position of the event in the Await call
	Event  Event // the event as it was passed to Await
	Done   bool  // the event notified (or replayed) during the wait
	Result any   // what it notified with
	Err    error // its error
}

// waiter is what a context may carry (internal/waiting.With): a goroutine
// run by a reactor, told when it starts and stops waiting so that the
// reactor can see a deadlock.
type waiter interface {
	BeginWait(events []Event, w waiting.State)
	EndWait()
}

// parker is a waiter that holds its events' owner while it runs (a
// cooperative coroutine of a reactor). When Parks reports true (the caller
// is the parker's own goroutine), Await subscribes directly, then calls
// Park, which calls w.Arm with a resume function, gives the owner back, and
// returns once resume has been called and the owner is held again. The
// wait calls resume exactly once, from any goroutine, when it ends. Done
// returns the done channel of the context whose end the parker turns into
// an Abort of its current wait by itself (its coroutine's own context), so
// that Await need not watch it.
type parker interface {
	waiter
	Parks() bool
	Park(w interface{ Arm(resume func()) })
	Done() <-chan struct{}
}

var errNilContext = fmt.Errorf("event: Await: %w", ErrNilContext)

// Await waits until the events satisfy m, ctx is done, or m's timeout runs
// out, then unsubscribes from every event and returns one Outcome per
// event, at the event's position (Done tells which notified).
//
// Await starts each event that lives in a loop (a timer, a poll, ...) and
// stops it afterwards; the Start is counted, so an event the caller started
// stays started. Events that are closed and store a result are replayed at
// subscription, and if that satisfies the wait Await returns without
// parking; a closed event that cannot be replayed counts as an outcome with
// ErrClosed. An event flagged ErrorHandled delivers its outcome without the
// error. A nil event, or a typed nil, is refused with ErrNilEvent. Await
// must not be called on a loop goroutine of one of the events (ErrOnLoop):
// it would stall the loop that has to wake it.
func Await(ctx context.Context, m Mode, events ...Event) ([]Outcome, error) {
	if ctx == nil {
		return nil, errNilContext
	}
	if err := m.check(events); err != nil {
		return nil, err
	}
	if len(events) == 1 && m == Any() && !isNil(events[0]) {
		if result, notified, err, ok := awaitOne(ctx, events[0], false); ok {
			o := Outcome{Event: events[0], Done: notified, Result: result}
			if notified {
				o.Err = err
			}
			return []Outcome{o}, err
		}
	}
	return await(ctx, m, events)
}

// await is Await past its checks and its fast path.
func await(ctx context.Context, m Mode, events []Event) ([]Outcome, error) {
	v, _ := waiting.From(ctx).(waiter)
	pk, _ := v.(parker)
	if pk != nil && !pk.Parks() {
		pk = nil
	}
	w := newWaker(ctx, m, events, pk == nil)
	for i, ev := range events {
		if isNil(ev) {
			return nil, fmt.Errorf("event: Await: event %d: %w", i, ErrNilEvent)
		}
		t := Deref(ev)
		if isNil(t) {
			return nil, fmt.Errorf("event: Await: event %d: %w", i, ErrNilEvent)
		}
		if pk == nil && t.base().owner().Owned() {
			return nil, fmt.Errorf("event: Await on %s (a callback must not wait; a cooperative coroutine waits with the context it was given): %w", t.Info(), ErrOnLoop)
		}
		w.slots[i].target = t
		w.outs[i] = Outcome{Index: i, Event: ev}
	}
	w.subscribe()
	if !w.isDone() {
		cover, _ := v.(interface{ Covers(Owner) bool })
		for i := range w.slots {
			o := w.owner(i)
			reg, ok := o.(waiting.Registry)
			if !ok || (cover != nil && cover.Covers(o)) || w.ownerBefore(i, o) {
				continue
			}
			defer reg.AddWait(w)()
		}
		if v != nil {
			v.BeginWait(w.targets(), w)
			defer v.EndWait()
		}
		if pk != nil {
			w.done0 = pk.Done()
			pk.Park(w)
			w.disarm()
		} else {
			w.block()
		}
	}
	w.unsubscribe()
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.outs, w.err
}

// newWaker makes the waker of one Await. Waits on one or two events, the
// common case, keep their per-event state inside the waker itself.
func newWaker(ctx context.Context, m Mode, events []Event, blocking bool) *waker {
	w := &waker{mode: m, ctx: ctx}
	if n := len(events); n <= len(w.inline.outs) {
		w.outs, w.slots = w.inline.outs[:n], w.inline.slots[:n]
	} else {
		w.outs, w.slots = make([]Outcome, n), make([]slot, n)
	}
	if blocking {
		w.ch = make(chan struct{}, 1)
	}
	w.cbv.fn, w.cbv.wait = w.on, true
	return w
}

func (m Mode) check(events []Event) error {
	n := len(events)
	if n == 0 {
		return fmt.Errorf("event: Await needs at least one event: %w", ErrBadMode)
	}
	if m.kind == 0 {
		return fmt.Errorf("event: a zero Mode (build one with Any, All, FirstSuccess or AtLeast): %w", ErrBadMode)
	}
	if m.kind == modeAtLeast && (m.n < 1 || m.n > n) {
		return fmt.Errorf("event: AtLeast(%d) needs 1 ≤ n ≤ %d events: %w", m.n, n, ErrBadMode)
	}
	if m.timeout < 0 {
		return fmt.Errorf("event: negative wait timeout %v: %w", m.timeout, ErrBadMode)
	}
	return nil
}

// waker is one waiting goroutine's state. Its callback runs on the loop
// goroutines of the events (several loops at once when the events belong to
// several reactors), so it is guarded by mu.
type waker struct {
	mode  Mode
	ctx   context.Context
	slots []slot // per event, touched with the event's owner held
	cbv   Callback
	ch    chan struct{}   // signalled at the end of a blocking wait
	stops []func() bool   // what arm set up to end a parked wait
	done0 <-chan struct{} // a context end the parker watches itself

	mu       sync.Mutex
	outs     []Outcome
	resume   func() // a parked wait's resume, called once when it ends
	ok, fail int
	done     bool
	woken    bool // release has woken the waiting goroutine
	err      error

	inline struct { // storage for waits on few events
		outs    [2]Outcome
		slots   [2]slot
		targets [2]Event
		stops   [2]func() bool
	}
}

// slot is one event of a wait.
type slot struct {
	target                   Event // resolved: what the callback is subscribed to
	handled, subbed, started bool
}

func (w *waker) owner(i int) Owner { return w.slots[i].target.base().owner() }

// ownerBefore reports whether an event before the i-th belongs to o. It
// reads the targets only: once subscribed, the other fields of the slots
// are the callbacks' (under mu).
func (w *waker) ownerBefore(i int, o Owner) bool {
	for j := range i {
		if w.owner(j) == o {
			return true
		}
	}
	return false
}

// targets lists the resolved events, for the waiter.
func (w *waker) targets() []Event {
	var ts []Event
	if n := len(w.slots); n <= len(w.inline.targets) {
		ts = w.inline.targets[:n]
	} else {
		ts = make([]Event, n)
	}
	for i := range w.slots {
		ts[i] = w.slots[i].target
	}
	return ts
}

// block waits for the end of the wait: a notification, ctx, or the bound.
func (w *waker) block() {
	var timeout <-chan time.Time
	if w.mode.timeout > 0 {
		t := time.NewTimer(w.mode.timeout)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-w.ch:
		return
	case <-w.ctx.Done():
		w.abort(context.Cause(w.ctx))
	case <-timeout:
		w.abort(&TimeoutError{After: w.mode.timeout})
	}
	<-w.ch // the abort ends the wait on the owner, or the wait ended first
}

// Arm prepares a parked wait: resume is called when the wait ends, by a
// notification, ctx, the bound, or an abort (at once if it is over already).
func (w *waker) Arm(resume func()) {
	w.mu.Lock()
	if w.woken {
		w.mu.Unlock()
		resume()
		return
	}
	w.resume = resume
	w.mu.Unlock()
	w.stops = w.inline.stops[:0]
	if done := w.ctx.Done(); done != nil && done != w.done0 {
		w.stops = append(w.stops, context.AfterFunc(w.ctx, func() { w.abort(context.Cause(w.ctx)) }))
	}
	if d := w.mode.timeout; d > 0 {
		w.stops = append(w.stops, time.AfterFunc(d, func() { w.abort(&TimeoutError{After: d}) }).Stop)
	}
}

// disarm stops what arm set up.
func (w *waker) disarm() {
	for _, stop := range w.stops {
		stop()
	}
}

// Done implements waiting.State: a wait whose context is done is over, even
// before its goroutine has woken to see it.
func (w *waker) Done() bool { return w.isDone() || w.ctx.Err() != nil }

// Abort implements WaitState.
func (w *waker) Abort(err error) { w.abort(err) }

// Bounded implements WaitState.
func (w *waker) Bounded() bool { return w.mode.timeout > 0 }

func (w *waker) isDone() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.done
}

// subscribe adds the callback to every event, one Call per owner (none
// for an owner the caller holds).
func (w *waker) subscribe() {
	for i := range w.slots {
		if w.slots[i].handled {
			continue
		}
		o := w.owner(i)
		if o.Owned() {
			w.subscribeOwner(o, i)
			continue
		}
		if err := o.Call(func() { w.subscribeOwner(o, i) }); err != nil {
			for j := i; j < len(w.slots); j++ {
				if !w.slots[j].handled && w.owner(j) == o {
					w.slots[j].handled = true
					w.onUnheld(w.slots[j].target, nil, err)
				}
			}
		}
	}
}

// subscribeOwner subscribes to the events of o from i on; o is held.
func (w *waker) subscribeOwner(o Owner, i int) {
	for j := i; j < len(w.slots); j++ {
		if !w.slots[j].handled && w.owner(j) == o {
			w.slots[j].handled = true
			w.subscribeOne(j)
		}
	}
}

// subscribeOne runs with the event's owner held. A closed event is
// replayed, and so is a stopped one that holds an outcome (a one-shot
// timer that fired); an open one is subscribed to and, when it lives in a
// loop, started (one counted Start, undone by unsubscribe).
func (w *waker) subscribeOne(j int) {
	s := &w.slots[j]
	b := s.target.base()
	if b.has(Closed) || b.settledIdle() {
		if b.replay(&w.cbv) != nil {
			w.on(s.target, nil, ErrClosed)
		}
		return
	}
	b.addCallback(&w.cbv)
	s.subbed = true
	if b.has(loopEvent) && !w.isDone() {
		s.started = b.startWaited(w.on, s.target, &s.subbed)
	}
}

// startWaited starts b, which a wait has just subscribed to (subbed is the
// wait's flag), and reports whether the wait holds that Start. A Start that
// fails is the wait's outcome, given to on; one that completes the event at
// once ends the wait, which lets go of the event: the Start is undone.
func (b *Base) startWaited(on CallbackFunc, ev Event, subbed *bool) bool {
	if err := b.start(); err != nil {
		on(ev, nil, err)
		return false
	}
	if !*subbed {
		b.stop(false)
		return false
	}
	return true
}

func (w *waker) unsubscribe() {
	for j := range w.slots {
		s := &w.slots[j]
		if !s.subbed {
			continue
		}
		if b := s.target.base(); b.owner().Owned() {
			w.unsubscribeOne(s)
		} else {
			b.exec(func() { w.unsubscribeOne(s) })
		}
	}
	w.cbv.Release()
}

func (w *waker) unsubscribeOne(s *slot) {
	b := s.target.base()
	b.delCallback(&w.cbv)
	if s.started {
		b.stop(false)
	}
}

// on receives a notification from any of the events.
func (w *waker) on(ev Event, result any, err error) {
	w.mu.Lock()
	w.onLocked(ev, result, err)
	w.release(ev.base().owner())
}

// onUnheld records an outcome while no owner is held (an owner refused
// the subscription).
func (w *waker) onUnheld(ev Event, result any, err error) {
	w.mu.Lock()
	w.onLocked(ev, result, err)
	w.release(nil)
}

// release unlocks mu. When the wait has just ended it first takes the
// waker off the events of held, the owner the caller holds (nil: none),
// and stops those it started, so that none of them — a channel receive, a
// pool acquire — completes for a waiter that has gone; then it wakes the
// waiting goroutine (a parked one through its resume, outside mu: resuming
// takes the owner's lock).
func (w *waker) release(held Owner) {
	if !w.done || w.woken {
		w.mu.Unlock()
		return
	}
	w.woken = true
	if held != nil {
		w.stopHeld(held)
	}
	resume := w.resume
	w.resume = nil
	w.mu.Unlock()
	if w.ch != nil {
		w.ch <- struct{}{}
	}
	if resume != nil {
		resume()
	}
}

// stopHeld unsubscribes from, and stops, the events of o, which is held.
func (w *waker) stopHeld(o Owner) {
	for j := range w.slots {
		if s := &w.slots[j]; s.subbed && w.owner(j) == o {
			w.unsubscribeOne(s)
			s.subbed, s.started = false, false
		}
	}
}

func (w *waker) onLocked(ev Event, result any, err error) {
	if w.done {
		return
	}
	i := -1
	b := ev.base()           // compare events by their Base: an embedding type and its embedded event are one event
	for j := range w.slots { // only target: the other fields belong to the Await goroutine
		if w.slots[j].target.base() == b && !w.outs[j].Done {
			i = j
			break
		}
	}
	if i < 0 {
		return
	}
	if err != nil && ev.Flags().Has(ErrorHandled) {
		err = nil
	}
	o := &w.outs[i]
	o.Done, o.Result, o.Err = true, result, err
	if err == nil {
		w.ok++
	} else {
		w.fail++
		if !w.mode.ignore {
			w.finish(err)
			return
		}
	}
	n := len(w.slots)
	switch w.mode.kind {
	case modeAny, modeFirstSuccess:
		if err == nil {
			w.finish(nil)
		} else if w.fail == n {
			w.finish(w.joined())
		}
	case modeAll:
		if w.ok+w.fail == n {
			w.finish(nil)
		}
	case modeAtLeast:
		if w.ok >= w.mode.n {
			w.finish(nil)
		} else if n-w.fail < w.mode.n {
			w.finish(w.joined())
		}
	}
}

// joined joins the events' errors in the order of the events.
func (w *waker) joined() error {
	var errs []error
	for _, o := range w.outs {
		if o.Err != nil {
			errs = append(errs, o.Err)
		}
	}
	return errors.Join(errs...)
}

// finish ends the wait; mu is held. release wakes the waiting goroutine.
func (w *waker) finish(err error) {
	w.done = true
	w.err = err
}

// abort ends the wait from outside (context, timeout, deadlock, Close). A
// wait on the events of one owner ends on that owner, so that its events
// are stopped at the moment it ends (see release).
func (w *waker) abort(err error) {
	o := w.soleOwner()
	if o != nil && !o.Owned() {
		if o.Post(func() { w.abortHeld(o, err) }) == nil {
			return
		}
		o = nil // the owner is gone: its events can no longer complete
	}
	w.abortHeld(o, err)
}

// abortHeld ends the wait with o held (or nil).
func (w *waker) abortHeld(o Owner, err error) {
	w.mu.Lock()
	if !w.done {
		w.finish(err)
	}
	w.release(o)
}

// soleOwner returns the owner of all the events, or nil if they have
// several.
func (w *waker) soleOwner() Owner {
	o := w.owner(0)
	for j := 1; j < len(w.slots); j++ {
		if w.owner(j) != o {
			return nil
		}
	}
	return o
}
