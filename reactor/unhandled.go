package reactor

import (
	"context"
	"errors"
	"runtime"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/eventlink"
)

// This file reports the coroutines whose error nobody takes, as Node
// reports an unhandled rejection: once, at the end of the loop turn in
// which the coroutine failed, naming the line that spawned it.
//
// Which coroutines are checked there depends on where they were made. One
// made on the loop while a run drives it (in a callback, a queued
// operation or a cooperative coroutine) has had the whole turn to get a
// callback, a waiter or a read of its Outcome: code on the loop runs to
// its end within the turn. One made from another goroutine cannot be
// told apart from one whose maker will Await it in a moment, after the
// turn: it counts as held by its maker, and is reported only if it is
// collected with its error never read. Neither is reported when it failed
// with its own context's end (context.Canceled, or the context's cause:
// Cancel, a cancelled parent, Close): the program asked for that.

// link reaches the unexported part of package event (MakerReports).
var link = eventlink.Get[event.Base, event.Event, event.Flags]()

// A failure is a coroutine made on the loop that failed in this turn, to
// be reported at its end if nobody took its error by then.
type failure struct {
	ev   event.Event // the coroutine
	b    *event.Base // its future's
	err  error
	site string
}

// failed is told, with the loop held and once its outcome is delivered,
// that the coroutine ev of co, whose future's Base is b, failed with err.
// quit says that err is its context's end. For a coroutine made off the
// loop it returns what the collector is to watch (see watchCollected).
func (co *coroutine) failed(ev event.Event, b *event.Base, err error, quit bool) *collected {
	switch {
	case quit:
		link.Reported(b) // nothing to say, now or at a Dispose
	case co.onLoop:
		co.r.coros.failed = append(co.r.coros.failed, failure{ev: ev, b: b, err: err, site: co.site})
	default:
		return &collected{r: co.r, b: b, err: err, site: co.site}
	}
	return nil
}

// reportFailures reports, at the end of a turn (and of Close), the
// coroutines of the turn whose error nobody took. With the loop held.
func (r *Reactor) reportFailures() {
	for len(r.coros.failed) > 0 {
		fs := r.coros.failed
		r.coros.failed = nil
		for _, f := range fs {
			if !taken(f.b) {
				r.report(f.ev, "unhandled error", &event.UnhandledError{Err: f.err, Site: f.site})
				link.Reported(f.b) // once: a Dispose says no more
			}
		}
		if r.coros.failed == nil { // no report made more: keep the array
			clear(fs)
			r.coros.failed = fs[:0]
		}
	}
}

// taken reports whether someone took the error of b's event: a callback
// or a waiter was added, its outcome replayed or read, it was reported (a
// Dispose reports it), or its error was marked handled.
func taken(b *event.Base) bool {
	return b.Flags()&(event.ErrorCaught|event.ErrorHandled) != 0
}

// collected is a failed coroutine made off the loop, watched until the
// collector takes its Coroutine value. b is its future's Base, which the
// Coroutine holds, not the Coroutine itself.
type collected struct {
	r    *Reactor
	b    *event.Base
	err  error
	site string
}

// watchCollected arranges c's report when co, the Coroutine that holds
// it, is collected.
func watchCollected[T any](co *Coroutine[T], c *collected) {
	runtime.AddCleanup(co, reportCollected, c)
}

func reportCollected(c *collected) {
	if taken(c.b) {
		return
	}
	const msg = "unhandled error of a collected coroutine"
	err := &event.UnhandledError{Err: c.err, Site: c.site}
	if c.r.Post(func() { c.r.report(nil, msg, err) }) != nil {
		c.r.report(nil, msg, err) // closed: its Logger or OnReport still hears
	}
}

// quit reports whether err, what a coroutine returned, is the end of its
// context ctx, which is done: the program cancelled it.
func quit(ctx context.Context, err error) bool {
	if err == nil || ctx.Err() == nil {
		return false
	}
	return errors.Is(err, context.Canceled) || errors.Is(err, context.Cause(ctx))
}
