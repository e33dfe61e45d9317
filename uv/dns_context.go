package uv

import (
	"context"
	"errors"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
)

// A lookup's Context (AddrInfoHints.Context, NameInfoHints.Context), the
// same on both drivers: context.AfterFunc queues the Context's end on the
// loop, where a lookup not yet completed nor closed completes with a
// DNSError holding the Context's error. That completion closes the event,
// so the kit cancels the lookup as a Close does (the resolver's context)
// and drops its answer. Any
// close of the event stops the AfterFunc (stopContext, from Free): a
// lookup over leaves nothing waiting on a Context still running. A
// Context already done at creation asks nothing of the resolver: the
// event is made as the pure-Go driver makes its lookups (on either
// driver), with a lookup that only returns the Context's error, so that
// no answer can come first.

// lookupContext is a lookup's watch of its Context. Loop only.
type lookupContext struct {
	stop func() bool // the AfterFunc's stop; nil when there is none
}

// contextStopper is a lookup that may watch a Context.
type contextStopper interface{ stopContext() }

func (a *AddrInfo) stopContext() { a.ctx.end() }
func (n *NameInfo) stopContext() { n.ctx.end() }

// stopWatching stops ev's watch of its Context, if it is a request that
// has one (a lookup, a file system request). On the loop, when ev closes.
func stopWatching(ev entryKind) {
	if s, ok := ev.(contextStopper); ok {
		s.stopContext()
	}
}

// contextError is the error of a lookup of op and name that ctx ended
// with err.
func contextError(op, name string, err error) error {
	return &DNSError{Op: op, Name: name, Code: resolverCode(err), Err: err,
		IsTimeout: errors.Is(err, context.DeadlineExceeded)}
}

// endedLookup returns, for a Context already done, the lookup that
// completes with its error asking nothing (submitGo runs it on either
// driver and completes the event on the loop's next turn); nil otherwise.
func endedLookup(op, name string, ctx context.Context) func(context.Context) (any, error) {
	if ctx == nil || ctx.Err() == nil {
		return nil
	}
	err := contextError(op, name, ctx.Err())
	return func(context.Context) (any, error) { return nil, err }
}

// watch makes ctx's end complete the lookup c, just submitted on r, with
// a DNSError of op and name, unless it is over by then.
func (w *lookupContext) watch(r *reactor.Reactor, c *reqCore, ctx context.Context, op, name string) {
	w.watchWith(r, c, ctx, func(err error) error { return contextError(op, name, err) })
}

// watchWith makes ctx's end complete the request c, just submitted on r,
// with fail(ctx.Err()) (a file system request's *fs.PathError, a lookup's
// DNSError), unless it is over by then.
func (w *lookupContext) watchWith(r *reactor.Reactor, c *reqCore, ctx context.Context, fail func(error) error) {
	if ctx == nil {
		return
	}
	// Refused only once the reactor's Close has begun, which closes the
	// lookup: nothing to watch then.
	r.Call(func() {
		if c.over || c.b.Flags().Has(event.Closed) {
			return
		}
		host := c.host
		w.stop = context.AfterFunc(ctx, func() {
			host.Queue(func() {
				if c.over || c.b.Flags().Has(event.Closed) {
					return
				}
				c.settle(nil, fail(ctx.Err()))
			})
		})
	})
}

// end stops watching the Context.
func (w *lookupContext) end() {
	if w.stop != nil {
		w.stop()
		w.stop = nil
	}
}
