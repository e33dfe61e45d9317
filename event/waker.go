package event

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/uvevent/uvevent/internal/caller"
)

// Mode says when a wait is over. Build one with Any, All, FirstSuccess or
// AtLeast, optionally bounded with Within and made tolerant of errors with
// IgnoreErrors.
//
// Without IgnoreErrors the first error ends the wait with that error
// (FirstSuccess excepted: it exists to tolerate errors). With it, an
// event's error is recorded in its Outcome and the wait goes on; the wait
// ends when enough events have succeeded, or when every event has notified
// and that can no longer happen, and then its error joins the events'.
type Mode struct {
	kind    modeKind
	ignore  bool
	n       int
	timeout time.Duration
}

type modeKind uint8

const (
	modeAny modeKind = iota
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

// Waiter is told when a goroutine run by a reactor starts and stops waiting,
// so that the reactor can see a deadlock. The reactor puts it in the context
// it gives its goroutines.
type Waiter interface {
	BeginWait(events []Event, w WaitState)
	EndWait()
}

// Parker is a Waiter that holds its events' owner while it runs (a
// cooperative coroutine of a reactor). When Parks reports true (the caller
// is the parker's own goroutine), Await subscribes directly, then calls
// Park, which calls arm with a resume function, gives the owner back, and
// returns once resume has been called and the owner is held again. The
// wait calls resume exactly once, from any goroutine, when it ends.
type Parker interface {
	Waiter
	Parks() bool
	Park(arm func(resume func()))
}

// WaitRegistry is implemented by owners that can end waits on their events
// when they shut down (a reactor's Close), so that no waiter hangs on an
// owner that is gone. Await registers with each owner of its events.
type WaitRegistry interface {
	AddWait(w WaitState) (remove func())
}

// WaitState is one running wait, as its Waiter sees it.
type WaitState interface {
	// Abort ends the wait with err (if it is not over yet).
	Abort(err error)
	// Done reports whether the wait is over: satisfied, aborted, or its
	// context done. It may be over before its goroutine has resumed and
	// called EndWait: a waiter that is done can no longer be part of a
	// deadlock.
	Done() bool
	// Bounded reports whether the wait ends by itself (a Within timeout,
	// which acts as a timer): such a waiter is never deadlocked. A context
	// deadline does not count: a deadlock is reported at once rather than
	// when the deadline comes.
	Bounded() bool
	// Where names the caller's line that waits ("main.go:42"), or "".
	Where() string
}

type waiterKey struct{}

// WithWaiter returns a context that tells Await about its waits.
func WithWaiter(ctx context.Context, w Waiter) context.Context {
	return context.WithValue(ctx, waiterKey{}, w)
}

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
	if err := m.check(events); err != nil {
		return nil, err
	}
	n := len(events)
	w := &waker{mode: m, ctx: ctx, ch: make(chan struct{}, 1), events: events}
	w.targets = make([]Event, n)
	w.outs = make([]Outcome, n)
	w.subbed = make([]bool, n)
	w.started = make([]bool, n)
	v, _ := ctx.Value(waiterKey{}).(Waiter)
	parker, _ := v.(Parker)
	if parker != nil && !parker.Parks() {
		parker = nil
	}
	for i, ev := range events {
		t := Deref(ev)
		if isNil(t) {
			return nil, fmt.Errorf("event: Await: event %d: %w", i, ErrNilEvent)
		}
		if parker == nil && t.base().owner().Owned() {
			return nil, fmt.Errorf("event: Await on %s: %w", t.Info(), ErrOnLoop)
		}
		w.targets[i] = t
		w.outs[i] = Outcome{Index: i, Event: ev}
	}
	if v != nil {
		w.stack.Record()
	}
	w.cb = NewCallback(w.on)
	w.subscribe()
	if !w.isDone() {
		for i, t := range w.targets {
			o := t.base().owner()
			reg, ok := o.(WaitRegistry)
			if !ok || slices.ContainsFunc(w.targets[:i], func(p Event) bool { return p.base().owner() == o }) {
				continue
			}
			defer reg.AddWait(w)()
		}
		if v != nil {
			v.BeginWait(w.targets, w)
			defer v.EndWait()
		}
		if parker != nil {
			parker.Park(w.arm)
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

func (m Mode) check(events []Event) error {
	n := len(events)
	if n == 0 {
		return errors.New("event: Await needs at least one event")
	}
	if m.kind == modeAtLeast && (m.n < 1 || m.n > n) {
		return fmt.Errorf("event: AtLeast(%d) needs 1 ≤ n ≤ %d events", m.n, n)
	}
	if m.timeout < 0 {
		return fmt.Errorf("event: negative wait timeout %v", m.timeout)
	}
	return nil
}

// waker is one waiting goroutine's state. Its callback runs on the loop
// goroutines of the events (several loops at once when the events belong to
// several reactors), so it is guarded by mu.
type waker struct {
	mode    Mode
	ctx     context.Context
	events  []Event // as passed to Await
	targets []Event // resolved: what the callback is subscribed to
	cb      *Callback
	ch      chan struct{}
	stack   caller.Stack // the caller's, for Where

	subbed, started []bool // touched with the event's owner held

	stops []func() bool // what arm set up to end a parked wait

	mu       sync.Mutex
	resume   func() // a parked wait's resume, called once when it ends
	outs     []Outcome
	ok, fail int
	done     bool
	err      error
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
	case <-w.ctx.Done():
		w.abort(w.ctx.Err())
	case <-timeout:
		w.abort(&TimeoutError{After: w.mode.timeout})
	}
}

// arm prepares a parked wait: resume is called when the wait ends, by a
// notification, ctx, the bound, or an abort (at once if it is over already).
func (w *waker) arm(resume func()) {
	w.mu.Lock()
	if w.done {
		w.mu.Unlock()
		resume()
		return
	}
	w.resume = resume
	w.mu.Unlock()
	if w.ctx.Done() != nil {
		w.stops = append(w.stops, context.AfterFunc(w.ctx, func() { w.abort(w.ctx.Err()) }))
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

// Done implements WaitState: a wait whose context is done is over, even
// before its goroutine has woken to see it.
func (w *waker) Done() bool { return w.isDone() || w.ctx.Err() != nil }

// Abort implements WaitState.
func (w *waker) Abort(err error) { w.abort(err) }

// Bounded implements WaitState.
func (w *waker) Bounded() bool { return w.mode.timeout > 0 }

// Where implements WaitState: the caller's line, outside this module's
// packages (tests of them count as callers).
func (w *waker) Where() string { return w.stack.Site() }

func (w *waker) isDone() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.done
}

// subscribe adds the callback to every event, one Exec per owner.
func (w *waker) subscribe() {
	handled := make([]bool, len(w.targets))
	for i, t := range w.targets {
		if handled[i] {
			continue
		}
		o := t.base().owner()
		err := o.Exec(func() {
			for j := i; j < len(w.targets); j++ {
				if handled[j] || w.targets[j].base().owner() != o {
					continue
				}
				handled[j] = true
				w.subscribeOne(j)
			}
		})
		if err != nil {
			for j := i; j < len(w.targets); j++ {
				if !handled[j] && w.targets[j].base().owner() == o {
					handled[j] = true
					w.on(w.targets[j], nil, err)
				}
			}
		}
	}
}

// subscribeOne runs with the event's owner held. A closed event is
// replayed; an open one is subscribed to and, when it lives in a loop,
// started (one counted Start, undone by unsubscribe).
func (w *waker) subscribeOne(j int) {
	b := w.targets[j].base()
	if b.has(Closed) {
		if b.replay(w.cb) != nil {
			w.on(w.targets[j], nil, ErrClosed)
		}
		return
	}
	b.addCallback(w.cb)
	w.subbed[j] = true
	if b.has(loopEvent) && !w.isDone() {
		if err := b.start(); err != nil {
			w.on(w.targets[j], nil, err)
			return
		}
		w.started[j] = true
	}
}

func (w *waker) unsubscribe() {
	for j, t := range w.targets {
		if !w.subbed[j] {
			continue
		}
		b := t.base()
		b.exec(func() {
			b.delCallback(w.cb)
			if w.started[j] {
				b.stop(false)
			}
		})
	}
	w.cb.Release()
}

// on receives a notification from any of the events.
func (w *waker) on(ev Event, result any, err error) {
	w.mu.Lock()
	w.onLocked(ev, result, err)
	w.unlock()
}

// unlock releases mu and, when the wait has just ended a parked wait,
// resumes it (outside mu: resuming takes the owner's lock).
func (w *waker) unlock() {
	var resume func()
	if w.done {
		resume, w.resume = w.resume, nil
	}
	w.mu.Unlock()
	if resume != nil {
		resume()
	}
}

func (w *waker) onLocked(ev Event, result any, err error) {
	if w.done {
		return
	}
	i := -1
	b := ev.base() // compare events by their Base: an embedding type and its embedded event are one event
	for j, t := range w.targets {
		if t.base() == b && !w.outs[j].Done {
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
	n := len(w.targets)
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

// finish ends the wait; mu is held.
func (w *waker) finish(err error) {
	w.done = true
	w.err = err
	select {
	case w.ch <- struct{}{}:
	default:
	}
}

// abort ends the wait from outside (context, timeout, deadlock).
func (w *waker) abort(err error) {
	w.mu.Lock()
	if !w.done {
		w.finish(err)
	}
	w.unlock()
}
