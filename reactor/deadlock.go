package reactor

import (
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/caller"
)

// DeadlockError is the error every waiter gets when the reactor finds a
// deadlock. It matches event.ErrDeadlock. The same report goes to the
// reactor's report function (Options.OnReport, or the logger).
type DeadlockError struct {
	// Waiters describes each waiting coroutine, in the order of their
	// numbers.
	Waiters []WaiterReport
}

// WaiterReport is one waiting coroutine in a deadlock report.
type WaiterReport struct {
	Coroutine string   // the coroutine's Info
	Where     string   // the line where it waits ("app/main.go:14"), if known
	Events    []string // the Info of each event it waits on
}

// Error says how many wait and, per waiter, where and on what.
func (e *DeadlockError) Error() string {
	if e == nil {
		return "reactor: deadlock"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "reactor: deadlock: %d coroutines wait and no active event can wake them", len(e.Waiters))
	for _, w := range e.Waiters {
		fmt.Fprintf(&b, "\n  %s", w.Coroutine)
	}
	return b.String()
}

// Unwrap makes errors.Is(err, event.ErrDeadlock) hold.
func (e *DeadlockError) Unwrap() error { return event.ErrDeadlock }

// deadlocked reports the condition: every coroutine waits, nothing queued,
// no active event. A wait that is already over — its waker was woken or its
// context is done, its goroutine has not resumed yet — does not count as
// waiting.
func (r *Reactor) deadlocked() bool {
	if n := len(r.coros.live); n == 0 || r.coros.waiting < n || r.busy() {
		return false
	}
	r.mu.Lock()
	queued := len(r.queue) > 0 || len(r.dropped) > 0 || len(r.turnQueue) > 0
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
	waiting := make([]*coroutine, 0, len(r.coros.live))
	for c := range r.coros.live {
		waiting = append(waiting, c)
	}
	slices.SortFunc(waiting, func(a, b *coroutine) int { return a.id - b.id })
	report := &DeadlockError{}
	sites := caller.Waiting()
	for _, c := range waiting {
		w := WaiterReport{Coroutine: c.describe(sites), Where: sites[c.goid]}
		for _, ev := range c.on {
			w.Events = append(w.Events, describeEvent(ev))
		}
		report.Waiters = append(report.Waiters, w)
	}
	r.reportDeadlock(report)
	for _, c := range waiting {
		// The wait is over as far as the loop is concerned; EndWait, which
		// the waiter posts when it resumes, finds it so.
		c.state = coRunning
		r.coros.waiting--
		c.wait.Abort(report)
	}
}

// reportDeadlock hands the report to Options.OnReport. Without one it is
// logged, at info level, as one structured record (see
// DeadlockError.LogValue): every waiter receives the *DeadlockError, so it is
// the program's to handle (an error nobody handles is reported as such
// when its coroutine's outcome goes unread).
func (r *Reactor) reportDeadlock(report *DeadlockError) {
	if r.opts.OnReport != nil {
		r.report(nil, "deadlock", report)
		return
	}
	r.opts.Logger.Info("uvevent: deadlock", slog.Any("deadlock", report)) // structured: DeadlockError.LogValue
}
