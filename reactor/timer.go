package reactor

import (
	"fmt"
	"math"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/eventkind"
)

// A Timer is an event that fires after a timeout and, when it has a repeat
// interval, again every interval. It lives on the reactor's Go-side timer
// wheel, on the loop's millisecond clock (Go's monotonic clock). It never
// fires before its timeout has passed since Start, as time.AfterFunc
// promises: Start reads the clock afresh (not the turn's cached reading) and
// rounds the deadline up to the next millisecond. A timeout of 0 fires on the
// next turn, never in the pass that started it; timers due in the same
// millisecond fire in start order.
//
// A one-shot timer that fires becomes Stopped, before its callbacks run,
// as a fired uv_timer_t does: it leaves the wheel at once, and Start,
// Reset (alone), or Refresh start it again (from its own callbacks
// too), as time.Timer's Reset restarts a fired timer and as libuv's and
// Node's timers serve a debounce or an idle timeout. Until it is started
// again, a wait on it (event.Await, Replay, a late Subscribe's replay)
// gets its last firing at once. A periodic timer goes back to Active after
// each firing until stopped; its firings keep their schedule (see
// NewTimer). Close ends a timer for good (ErrClosed from then on).
//
// A Timer is a Go-owned event (flag GoOwned): it holds no C memory. While it
// is started, the reactor keeps it alive; a timer that is not started and is
// no longer referenced (a fired one-shot timer dropped, for one) is simply
// collected.
type Timer struct {
	event.Base
	c       atomic.Pointer[timerConf] // the reactor's oneShot unless the timer has repeated; set on the loop, read anywhere
	timeout time.Duration

	// its place in the wheel (wheel.go): no links through the timers, so
	// that the struct is 80 bytes, a size class of its own
	// (TestTimerSizeClass)
	due uint32 // in a slot or the ready queue: the low 32 bits of its loop millisecond (wheel.dueOf); in the heap: its start sequence
	loc uint32 // the queue it is in (inNone: none) and its position there
}

// timerConf holds a timer's reactor and repeat interval. The timers that do
// not repeat, most of them (T1's million), share their reactor's oneShot;
// a repeating one has its own, made with it (NewTimer) or by the first
// SetRepeat that makes it repeat, and keeps it from then on.
type timerConf struct {
	r      *Reactor
	repeat time.Duration
}

// repeat returns the repeat interval. On the loop (or before the timer is
// shared).
func (t *Timer) repeat() time.Duration { return t.conf().repeat }

func (t *Timer) conf() *timerConf { return t.c.Load() }

// reactor returns the timer's reactor: nil for a zero Timer, whose methods
// then fail as on a zero Reactor.
func (t *Timer) reactor() *Reactor {
	c := t.conf()
	if c == nil {
		return nil
	}
	return c.r
}

type timerOps Timer

// NewTimer returns a timer that fires timeout after Start and, if repeat is
// not zero, every repeat after that, on a schedule: the n-th firing is due
// timeout + (n-1)×repeat after Start, whatever the loop's lateness in
// firing the ones before (as time.Ticker; a loop late by more than a
// period fires once for the periods it missed, then goes on with the
// schedule). Negative durations are refused with an error matching
// syscall.EINVAL.
func (r *Reactor) NewTimer(timeout, repeat time.Duration) (*Timer, error) {
	if timeout < 0 || repeat < 0 {
		return nil, fmt.Errorf("reactor: NewTimer(%v, %v): negative duration: %w", timeout, repeat, syscall.EINVAL)
	}
	if r == nil {
		return nil, fmt.Errorf("reactor: NewTimer: nil reactor: %w", syscall.EINVAL)
	}
	if err := r.usable(); err != nil {
		return nil, err
	}
	if r.closing.Load() {
		return nil, ErrReactorClosed
	}
	var t *Timer
	if repeat == 0 {
		t = &Timer{timeout: timeout}
		t.c.Store(&r.oneShot)
	} else {
		// One allocation still, in the 96-byte class: the timer and its own
		// conf together.
		p := &struct {
			t Timer
			c timerConf
		}{t: Timer{timeout: timeout}, c: timerConf{r: r, repeat: repeat}}
		t = &p.t
		t.c.Store(&p.c)
	}
	eventkind.Init(&t.Base, (*timerOps)(t), true, event.GoOwned)
	return t, nil
}

// Reset changes the timeout and starts the timer from now with it, as
// time.Timer.Reset does: a started timer's deadline moves to the new
// timeout from now (libuv's stop + start), and a stopped one — a one-shot
// timer that fired, or one stopped by Stop — is started again. It refuses
// a negative duration and a closed timer (ErrClosed).
func (t *Timer) Reset(timeout time.Duration) error {
	if t == nil {
		return event.ErrNilEvent
	}
	if timeout < 0 {
		return fmt.Errorf("reactor: Timer.Reset(%v): negative duration: %w", timeout, syscall.EINVAL)
	}
	var err error
	if e := t.reactor().Call(func() {
		if t.Flags().Has(event.Closed) {
			err = event.ErrClosed
			return
		}
		t.timeout = timeout
		err = t.restart()
	}); e != nil {
		return e
	}
	return err
}

// SetRepeat changes the repeat interval (0 makes the timer one-shot). It
// takes effect at the next firing.
func (t *Timer) SetRepeat(repeat time.Duration) error {
	if t == nil {
		return event.ErrNilEvent
	}
	if repeat < 0 {
		return fmt.Errorf("reactor: Timer.SetRepeat(%v): negative duration: %w", repeat, syscall.EINVAL)
	}
	return t.reactor().Call(func() {
		switch c := t.conf(); {
		case c != &c.r.oneShot:
			c.repeat = repeat
		case repeat != 0:
			t.c.Store(&timerConf{r: c.r, repeat: repeat})
		}
	})
}

// Refresh restarts the timer from now with its timeout (Node's
// timeout.refresh(), libuv's uv_timer_start with the same timeout): a
// started timer's deadline is pushed back to a full timeout from now; a
// stopped one (a one-shot timer that fired, for one) is started. Calling
// it on every event is a debounce: the timer fires once the events pause
// for a timeout. It returns ErrClosed once the timer is closed.
func (t *Timer) Refresh() error {
	if t == nil {
		return event.ErrNilEvent
	}
	var err error
	if e := t.reactor().Call(func() {
		if t.Flags().Has(event.Closed) {
			err = event.ErrClosed
			return
		}
		err = t.restart()
	}); e != nil {
		return e
	}
	return err
}

// restart starts a stopped timer, or moves a started one's deadline to its
// timeout from now. On the loop.
func (t *Timer) restart() error {
	if t.where() == inNone && eventkind.LoopRefs(t) == 0 {
		return t.Start()
	}
	r := t.reactor()
	r.timers.remove(t)
	r.timers.insert(t, r.dueAfter(t.timeout))
	return nil
}

// Timeout returns the timeout the timer was created (or last Reset) with.
func (t *Timer) Timeout() time.Duration {
	if t == nil {
		return 0
	}
	var d time.Duration
	t.reactor().Call(func() { d = t.timeout })
	return d
}

// Repeat returns the repeat interval; 0 means one-shot.
func (t *Timer) Repeat() time.Duration {
	if t == nil {
		return 0
	}
	var d time.Duration
	t.reactor().Call(func() { d = t.repeat() })
	return d
}

// DueIn returns how long until the timer fires (uv_timer_get_due_in): 0
// when it is due, or not started. A deadline beyond what a Duration holds
// (a timeout of about 292 years: the timer never fires) gives the largest
// Duration, math.MaxInt64.
func (t *Timer) DueIn() time.Duration {
	if t == nil {
		return 0
	}
	var d time.Duration
	r := t.reactor()
	r.Call(func() {
		if t.where() == inNone {
			return
		}
		switch due := r.timers.dueOf(t); {
		case due > math.MaxInt64/int64(time.Millisecond):
			d = math.MaxInt64
		default:
			d = max(0, time.Duration(due)*time.Millisecond-time.Since(r.epoch))
		}
	})
	return d
}

// Again restarts a repeating timer with its repeat interval as the timeout
// (uv_timer_again): if it is started, it is rescheduled from now; if it was
// stopped, it is started again. It returns an error matching syscall.EINVAL
// for a timer never started or not repeating, and ErrClosed once closed.
func (t *Timer) Again() error {
	if t == nil {
		return event.ErrNilEvent
	}
	var err error
	if e := t.reactor().Call(func() {
		switch {
		case t.Flags().Has(event.Closed):
			err = event.ErrClosed
		case event.StateOf(t) == event.Created:
			err = fmt.Errorf("reactor: Timer.Again on a timer never started: %w", syscall.EINVAL)
		case t.repeat() == 0:
			err = fmt.Errorf("reactor: Timer.Again on a timer that does not repeat: %w", syscall.EINVAL)
		default:
			if t.where() == inNone {
				if err = t.Start(); err != nil {
					return
				}
			}
			r := t.reactor()
			r.timers.remove(t)
			r.timers.insert(t, r.dueAfter(t.repeat()))
		}
	}); e != nil {
		return e
	}
	return err
}

// ms rounds a duration up to whole milliseconds, the loop clock's unit, so
// a timer never fires before its timeout has passed on that clock.
func ms(d time.Duration) int64 {
	q := int64(d / time.Millisecond)
	if d%time.Millisecond != 0 {
		q++
	}
	return q
}

// nextDue is a periodic timer's next deadline once it has fired, at now,
// for the deadline due: one period after that deadline, not after the
// moment it fired, so that its firings keep their schedule as
// time.Ticker's do (a loop a little late each time does not make it
// drift). Deadlines the loop has already passed are coalesced, as
// Ticker drops the ticks a slow receiver misses: the next is the first on
// the schedule not before now. It is never early: never before a whole
// period after the previous deadline.
func (t *Timer) nextDue(due, now int64) int64 {
	p := ms(t.repeat())
	next := due + p
	if next < now {
		next += (now - next + p - 1) / p * p
	}
	return min(next, maxDue)
}

// fire runs on the loop when the wheel says t is due.
func (t *Timer) fire() {
	if c := t.conf(); c.repeat > 0 {
		w := &c.r.timers
		w.insert(t, t.nextDue(w.dueOf(t), c.r.now()))
		eventkind.Notify(&t.Base, nil, nil)
		return
	}
	// One-shot: stopped (it has left the wheel), not closed; its firing
	// is kept for waiters until it is started again (the kind bit).
	for eventkind.LoopRefs(t) > 0 {
		t.Stop()
	}
	eventkind.SetKindBit(&t.Base, true)
	eventkind.Notify(&t.Base, nil, nil)
}

func (o *timerOps) Owner() event.Owner { return (*Timer)(o).reactor().Owner() }
func (o *timerOps) Event() event.Event { return (*Timer)(o) }

func (o *timerOps) Arm() error {
	t := (*Timer)(o)
	r := t.reactor()
	if r.closing.Load() {
		return ErrReactorClosed
	}
	r.timers.insert(t, r.dueAfter(t.timeout))
	eventkind.SetKindBit(&t.Base, false) // a wait from now on is for the next firing
	return nil
}

func (o *timerOps) Disarm()        { (*Timer)(o).reactor().timers.remove((*Timer)(o)) }
func (o *timerOps) Free(free bool) {}

// Stored gives a one-shot timer's last firing to a wait that comes while
// it is stopped after it (the kind bit: it has fired and has not been
// started since); once closed, it has nothing to give (ErrClosed).
func (o *timerOps) Stored() (any, error, bool) {
	return nil, nil, eventkind.KindBit(&o.Base) && !o.Flags().Has(event.Closed)
}

func (o *timerOps) Describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Timer(timeout=%v", o.timeout)
	switch repeat := (*Timer)(o).repeat(); repeat {
	case 0:
	case o.timeout:
		b.WriteString(", periodic")
	default:
		fmt.Fprintf(&b, ", repeat=%v", repeat)
	}
	if o.Flags().Has(event.Hidden) {
		b.WriteString(", hidden")
	}
	b.WriteByte(')')
	return b.String()
}
