package reactor

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/uvevent/uvevent/event"
)

// A Coroutine is a goroutine run by the reactor, and the event of its
// result: a future completed with what the function returns (or the panic it
// raised, as a *event.PanicError). It replays its result to late waiters.
//
// While it runs, Await in the function (with the context it was given) tells
// the reactor that it waits: when every coroutine of the reactor waits, no
// operation is queued and no active event remains, nothing can ever wake them,
// and each wait ends with an error matching event.ErrDeadlock (a
// *DeadlockError carrying the report).
type Coroutine struct {
	*event.Future
	id    int
	r     *Reactor
	state coState // loop-owned
	on    []event.Event
	wait  event.WaitState
}

type coState uint8

const (
	coRunning coState = iota
	coWaiting
	coDone
)

// coroutines is the reactor's roll of running coroutines (loop-owned).
type coroutines struct {
	waiting int
	nextID  int
	live    map[*Coroutine]struct{} // running coroutines; len is their number
}

func (c *coroutines) init() { c.live = map[*Coroutine]struct{}{} }

// Go runs fn in a new goroutine as a coroutine of the reactor and returns its
// event. fn gets a context to pass to event.Await (derived from ctx); it is
// cancelled when fn returns.
func (r *Reactor) Go(ctx context.Context, fn func(ctx context.Context) (any, error)) (*Coroutine, error) {
	c := &Coroutine{Future: event.NewFuture(r), r: r}
	if err := r.Exec(func() {
		r.coros.nextID++
		c.id = r.coros.nextID
		r.coros.live[c] = struct{}{}
	}); err != nil {
		return nil, err
	}
	cctx, cancel := context.WithCancel(event.WithWaiter(ctx, (*coWaiter)(c)))
	go func() {
		defer cancel()
		v, err := c.call(cctx, fn)
		// The outcome first: the roll is updated after it (the queue is in
		// order), so Run cannot end before the outcome is delivered.
		if err != nil {
			c.Reject(err)
		} else {
			c.Resolve(v)
		}
		r.Post(func() {
			c.state = coDone
			delete(r.coros.live, c)
		})
	}()
	return c, nil
}

func (c *Coroutine) call(ctx context.Context, fn func(context.Context) (any, error)) (v any, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = panicError(p)
		}
	}()
	return fn(ctx)
}

// Info describes the coroutine, e.g. "Coroutine 3 (waiting on 2 events)".
func (c *Coroutine) Info() string {
	var s string
	if err := c.r.Exec(func() { s = c.describe() }); err != nil {
		return fmt.Sprintf("Coroutine %d (%v)", c.id, err)
	}
	return s
}

func (c *Coroutine) describe() string {
	switch c.state {
	case coWaiting:
		return fmt.Sprintf("Coroutine %d (waiting on %d events)", c.id, len(c.on))
	case coDone:
		return fmt.Sprintf("Coroutine %d (done)", c.id)
	}
	return fmt.Sprintf("Coroutine %d (running)", c.id)
}

// coWaiter is the event.Waiter the coroutine's context carries.
type coWaiter Coroutine

func (w *coWaiter) BeginWait(events []event.Event, ws event.WaitState) {
	c := (*Coroutine)(w)
	// A wait that ends by itself, or on an event of another owner (which
	// this reactor cannot see), can never be part of this reactor's deadlock.
	if ws.Bounded() || slices.ContainsFunc(events, func(ev event.Event) bool {
		return event.OwnerOf(ev) != event.Owner(c.r)
	}) {
		return
	}
	c.r.Post(func() {
		c.state = coWaiting
		c.on = events
		c.wait = ws
		c.r.coros.waiting++
	})
}

func (w *coWaiter) EndWait() {
	c := (*Coroutine)(w)
	c.r.Post(func() {
		if c.state == coWaiting {
			c.state = coRunning
			c.r.coros.waiting--
		}
		c.on, c.wait = nil, nil
	})
}

// DeadlockError is the error every waiter gets when the reactor finds a
// deadlock. It matches event.ErrDeadlock.
type DeadlockError struct {
	// Waiters describes each waiting coroutine and the events it waits on.
	Waiters []WaiterReport
}

// WaiterReport is one waiting coroutine in a deadlock report.
type WaiterReport struct {
	Coroutine string   // the coroutine's Info
	Events    []string // the Info of each event it waits on
}

// Error says how many wait and, per waiter, on what.
func (e *DeadlockError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "deadlock: %d coroutines wait and no active event can wake them", len(e.Waiters))
	for _, w := range e.Waiters {
		fmt.Fprintf(&b, "\n  %s: %s", w.Coroutine, strings.Join(w.Events, ", "))
	}
	return b.String()
}

// Unwrap makes errors.Is(err, event.ErrDeadlock) hold.
func (e *DeadlockError) Unwrap() error { return event.ErrDeadlock }

// deadlocked reports the condition: every coroutine waits, nothing queued,
// no active event. A wait that is already over — its waker was woken, its
// goroutine has not resumed yet — does not count as waiting.
func (r *Reactor) deadlocked() bool {
	if n := len(r.coros.live); n == 0 || r.coros.waiting < n || r.busy() {
		return false
	}
	r.mu.Lock()
	queued := len(r.queue) > 0 || len(r.dropped) > 0
	r.mu.Unlock()
	if queued {
		return false
	}
	for c := range r.coros.live {
		if c.state != coWaiting || c.wait.Done() {
			return false
		}
	}
	return true
}

// detectDeadlock runs before the loop parks. After one more non-blocking
// turn has ruled out a false alarm, every waiter gets a *DeadlockError.
func (r *Reactor) detectDeadlock() {
	if !r.deadlocked() {
		return
	}
	r.turn()
	if !r.deadlocked() {
		return
	}
	report := &DeadlockError{}
	var waiting []*Coroutine
	for c := range r.coros.live {
		if c.state != coWaiting {
			continue
		}
		w := WaiterReport{Coroutine: c.describe()}
		for _, ev := range c.on {
			w.Events = append(w.Events, ev.Info())
		}
		report.Waiters = append(report.Waiters, w)
		waiting = append(waiting, c)
	}
	slices.SortFunc(report.Waiters, func(a, b WaiterReport) int { return strings.Compare(a.Coroutine, b.Coroutine) })
	r.Report(nil, "deadlock", report)
	for _, c := range waiting {
		// The wait is over as far as the loop is concerned; EndWait, which
		// the waiter posts when it resumes, finds it so.
		c.state = coRunning
		r.coros.waiting--
		c.wait.Abort(report)
	}
}
