package loop

import (
	"fmt"
	"syscall"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
)

// A DelayID names a one-shot timer made by Delay. It is a type of its own,
// so that it cannot be passed where a RepeatID (or any other id) is
// expected; the zero value names no timer.
type DelayID struct{ n uint64 }

// A RepeatID names a periodic timer made by Repeat; the zero value names no
// timer.
type RepeatID struct{ n uint64 }

// String gives the id as "delay#N".
func (id DelayID) String() string { return fmt.Sprintf("delay#%d", id.n) }

// String gives the id as "repeat#N".
func (id RepeatID) String() string { return fmt.Sprintf("repeat#%d", id.n) }

// Delay calls fn once, on the loop goroutine, after d (EventInterface's delay).
// The timer never fires before d has passed; a d of 0 fires on the next
// turn. Once it has fired it is gone: OffDelay returns false. A negative d
// or a nil fn is refused with an error matching syscall.EINVAL; a closed
// reactor with reactor.ErrReactorClosed.
func (l *Loop) Delay(d time.Duration, fn func()) (DelayID, error) {
	var id DelayID
	err := l.addTimer("Delay", d, 0, fn, func() uint64 {
		id = DelayID{l.newID()}
		return id.n
	}, func(t *reactor.Timer) { l.delays[id] = t }, func() bool {
		if _, ok := l.delays[id]; !ok {
			return false // removed by OffDelay or DeleteAllTimers first
		}
		delete(l.delays, id)
		return true
	})
	if err != nil {
		return DelayID{}, err
	}
	return id, nil
}

// Repeat calls fn on the loop goroutine every interval until OffRepeat
// (EventInterface's repeat). A callback may remove its own timer. An interval of
// 0 or less, or a nil fn, is refused with an error matching syscall.EINVAL.
func (l *Loop) Repeat(interval time.Duration, fn func()) (RepeatID, error) {
	if interval <= 0 {
		return RepeatID{}, fmt.Errorf("loop: Repeat(%v): interval must be positive: %w", interval, syscall.EINVAL)
	}
	var id RepeatID
	err := l.addTimer("Repeat", interval, interval, fn, func() uint64 {
		id = RepeatID{l.newID()}
		return id.n
	}, func(t *reactor.Timer) { l.repeats[id] = t }, func() bool {
		_, ok := l.repeats[id]
		return ok
	})
	if err != nil {
		return RepeatID{}, err
	}
	return id, nil
}

// addTimer makes and starts a timer on the loop: name gives the id, keep
// records the timer, and live (on the loop, when it fires) says whether
// the id still stands, forgetting a one-shot one.
func (l *Loop) addTimer(op string, d, repeat time.Duration, fn func(), name func() uint64, keep func(*reactor.Timer), live func() bool) error {
	if fn == nil {
		return errNilFunc(op)
	}
	if d < 0 {
		return fmt.Errorf("loop: %s(%v): negative duration: %w", op, d, syscall.EINVAL)
	}
	return l.exec(op, func() error {
		t, err := l.r.NewTimer(d, repeat)
		if err != nil {
			return err
		}
		if _, err := event.Subscribe(t, func(_ event.Event, _ any, err error) {
			if err == nil && live() {
				fn()
			}
		}); err != nil {
			return err
		}
		if err := t.Start(); err != nil {
			return err
		}
		name()
		keep(t)
		return nil
	})
}

// newID returns the next id number (loop-owned; ids start at 1).
func (l *Loop) newID() uint64 {
	l.nextID++
	return l.nextID
}

// OffDelay removes a timer made by Delay before it fires, and reports
// whether it did: false for a timer that fired already, was removed, or
// never existed. After OffDelay returns true, fn is never called.
func (l *Loop) OffDelay(id DelayID) bool {
	return l.off(func() bool {
		t, ok := l.delays[id]
		if ok {
			delete(l.delays, id)
			t.Close()
		}
		return ok
	})
}

// OffRepeat removes a timer made by Repeat and reports whether it did.
// After it returns, fn is not called again (from a callback of the same
// timer: not after the running call).
func (l *Loop) OffRepeat(id RepeatID) bool {
	return l.off(func() bool {
		t, ok := l.repeats[id]
		if ok {
			delete(l.repeats, id)
			t.Close()
		}
		return ok
	})
}

// DeleteAllTimers removes every timer made by Delay and Repeat on this
// loop (EventInterface's deleteAllTimer). Timers made on the reactor by other
// means are not touched.
func (l *Loop) DeleteAllTimers() {
	if l.usable("DeleteAllTimers") == nil {
		l.r.Call(l.deleteAllTimers)
	}
}

func (l *Loop) deleteAllTimers() {
	for id, t := range l.delays {
		delete(l.delays, id)
		t.Close()
	}
	for id, t := range l.repeats {
		delete(l.repeats, id)
		t.Close()
	}
}

// TimerCount returns how many timers made by Delay and Repeat are pending
// (EventInterface's getTimerCount): one-shot timers not fired yet and periodic
// timers not removed. It is 0 once the reactor is closed.
func (l *Loop) TimerCount() int {
	if l.usable("TimerCount") != nil {
		return 0
	}
	n := 0
	l.r.Call(func() { n = len(l.delays) + len(l.repeats) })
	return n
}
