package event

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Mode says when a wait is over. Build one with Any, All, FirstSuccess or
// AtLeast, optionally bounded with Within.
type Mode struct {
	kind    modeKind
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

// Any ends the wait at the first event to notify, success or error.
func Any() Mode { return Mode{kind: modeAny} }

// All ends the wait when every event has notified; the error joins theirs.
func All() Mode { return Mode{kind: modeAll} }

// FirstSuccess ends the wait at the first event to notify without error, or
// when all have failed.
func FirstSuccess() Mode { return Mode{kind: modeFirstSuccess} }

// AtLeast ends the wait when n events have succeeded, or as soon as that
// can no longer happen.
func AtLeast(n int) Mode { return Mode{kind: modeAtLeast, n: n} }

// Within bounds the wait: after d it ends with ErrTimeout.
func (m Mode) Within(d time.Duration) Mode {
	m.timeout = d
	return m
}

// Outcome is one event's notification as a waiter saw it.
type Outcome struct {
	Index  int   // position of the event in the Await call
	Event  Event // the event as it was passed to Await
	Result any
	Err    error
}

// Waiter is told when a goroutine run by a reactor starts and stops waiting,
// so that the reactor can see a deadlock. The reactor puts it in the context
// it gives its goroutines.
type Waiter interface {
	BeginWait(events []Event, w WaitState)
	EndWait()
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
	// Done reports whether the wait is over. It may be over before its
	// goroutine has resumed and called EndWait: a waiter that is done can
	// no longer be part of a deadlock.
	Done() bool
	// Bounded reports whether the wait ends by itself (a Within timeout,
	// which acts as a timer): such a waiter is never deadlocked. A context
	// deadline does not count: a deadlock is reported at once rather than
	// when the deadline comes.
	Bounded() bool
}

type waiterKey struct{}

// WithWaiter returns a context that tells Await about its waits.
func WithWaiter(ctx context.Context, w Waiter) context.Context {
	return context.WithValue(ctx, waiterKey{}, w)
}

// Await waits until the events satisfy m, ctx is done, or m's timeout runs
// out, then unsubscribes from every event and returns the outcomes seen, in
// the order they came. Events that are closed and store a result are
// replayed; a closed event that cannot be replayed counts as an outcome with
// ErrClosed. An event flagged ErrorHandled delivers its outcome without the
// error. Await must not be called on a loop goroutine of one of the events
// (ErrOnLoop): it would stall the loop that has to wake it.
func Await(ctx context.Context, m Mode, events ...Event) ([]Outcome, error) {
	if err := m.check(len(events)); err != nil {
		return nil, err
	}
	w := &waker{mode: m, ch: make(chan struct{}, 1), bounded: m.timeout > 0}
	w.events = events
	w.targets = make([]Event, len(events))
	w.seen = make([]bool, len(events))
	for i, ev := range events {
		t := Resolve(ev)
		if t.base().owner().Owned() {
			return nil, fmt.Errorf("event: Await on %s: %w", t.Info(), ErrOnLoop)
		}
		w.targets[i] = t
	}
	w.cb = NewCallback(w.on)
	w.subscribe()
	for i, t := range w.targets {
		o := t.base().owner()
		reg, ok := o.(WaitRegistry)
		if !ok || slices.ContainsFunc(w.targets[:i], func(p Event) bool { return p.base().owner() == o }) {
			continue
		}
		defer reg.AddWait(w)()
	}
	if v, ok := ctx.Value(waiterKey{}).(Waiter); ok && !w.isDone() {
		v.BeginWait(w.targets, w)
		defer v.EndWait()
	}
	var timeout <-chan time.Time
	if m.timeout > 0 {
		t := time.NewTimer(m.timeout)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-w.ch:
	case <-ctx.Done():
		w.abort(ctx.Err())
	case <-timeout:
		w.abort(ErrTimeout)
	}
	w.unsubscribe()
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.outs, w.err
}

func (m Mode) check(n int) error {
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
	events  []Event // as passed to Await
	targets []Event // resolved: what the callback is subscribed to
	cb      *Callback
	ch      chan struct{}
	bounded bool

	mu       sync.Mutex
	seen     []bool
	subbed   []bool
	outs     []Outcome
	ok, fail int
	done     bool
	err      error
}

// Done implements WaitState.
func (w *waker) Done() bool { return w.isDone() }

// Abort implements WaitState.
func (w *waker) Abort(err error) { w.abort(err) }

// Bounded implements WaitState.
func (w *waker) Bounded() bool { return w.bounded }

func (w *waker) isDone() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.done
}

// subscribe adds the callback to every event, one Exec per owner.
func (w *waker) subscribe() {
	w.subbed = make([]bool, len(w.targets))
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

// subscribeOne runs with the event's owner held.
func (w *waker) subscribeOne(j int) {
	b := w.targets[j].base()
	if !b.has(Closed) {
		b.addCallback(w.cb)
		w.subbed[j] = true
		return
	}
	if b.replay(w.cb) != nil {
		w.on(w.targets[j], nil, ErrClosed)
	}
}

func (w *waker) unsubscribe() {
	for j, t := range w.targets {
		if !w.subbed[j] {
			continue
		}
		b := t.base()
		b.exec(func() { b.delCallback(w.cb) })
	}
	w.cb.Release()
}

// on receives a notification from any of the events.
func (w *waker) on(ev Event, result any, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return
	}
	i := -1
	b := ev.base() // compare events by their Base: an embedding type and its embedded event are one event
	for j, t := range w.targets {
		if t.base() == b && !w.seen[j] {
			i = j
			break
		}
	}
	if i < 0 {
		return
	}
	w.seen[i] = true
	if err != nil && ev.Flags().Has(ErrorHandled) {
		err = nil
	}
	w.outs = append(w.outs, Outcome{Index: i, Event: w.events[i], Result: result, Err: err})
	if err == nil {
		w.ok++
	} else {
		w.fail++
	}
	n := len(w.targets)
	switch w.mode.kind {
	case modeAny:
		w.finish(err)
	case modeAll:
		if w.ok+w.fail == n {
			w.finish(w.joined())
		}
	case modeFirstSuccess:
		if err == nil {
			w.finish(nil)
		} else if w.fail == n {
			w.finish(w.joined())
		}
	case modeAtLeast:
		if w.ok >= w.mode.n {
			w.finish(nil)
		} else if n-w.fail < w.mode.n {
			w.finish(w.joined())
		}
	}
}

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
	defer w.mu.Unlock()
	if !w.done {
		w.finish(err)
	}
}
