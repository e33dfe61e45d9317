package uv

import (
	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/eventkind"
	uvcgo "github.com/uvevent/uvevent/internal/cgo"
	"github.com/uvevent/uvevent/internal/kind"
	"github.com/uvevent/uvevent/reactor"
)

// This file is the kind kit's other half: one-shot requests (a lookup, a
// thread-pool job, a write), as opposed to handles. A request's event is in
// the reactor's id table from submission until libuv's callback reported,
// so it counts as active and keeps Run going and deadlocks from being
// reported. The rules every request kind keeps:
//   - completion is always delivered: the result, or event.ErrClosed when
//     the request's event (or its reactor) closed first;
//   - a request disposed before it completes is cancelled where libuv can
//     (uv_cancel), freed exactly once by its C callback, and notifies nobody;
//   - the payload of the completion record is the kind's to copy or take.

// reqCore is the event half of a request kind: the kind's event embeds it
// beside event.Base (which b points at) and implements reqOps. It promotes
// no exported method: what a user calls is event.Base's.
type reqCore struct {
	b *event.Base
	entry
	req uvcgo.Request // 0 once libuv reported
	k   reqOps

	// the stored outcome, replayed to late subscribers
	res  any
	err  error
	over bool
}

// reqOps is what a request kind adds to reqCore; called with the owner held.
type reqOps interface {
	entryKind
	// done turns the completion record into the event's result.
	done(rec *uvcgo.Completion) (result any, err error)
	// cancel asks libuv to cancel the request (uv_cancel); it may fail
	// when the request already runs, which is fine: it completes, unseen.
	cancel(req uvcgo.Request)
}

// reqCoreOps implements eventkind.Ops and kind.Handle for reqCore, so that
// these methods do not show on the request kinds, which embed reqCore.
type reqCoreOps reqCore

func (o *reqCoreOps) Owner() event.Owner       { return o.r.Owner() }
func (o *reqCoreOps) Event() event.Event       { return o.ev }
func (o *reqCoreOps) HandleEvent() event.Event { return o.ev }
func (o *reqCoreOps) Kind() string             { return o.entry.kind() }
func (o *reqCoreOps) Describe() string         { return o.entry.info() }

// submitReq creates a request's event on r and submits it with submit,
// which gets the id its record must carry. It runs on the loop.
func submitReq(r *reactor.Reactor, b *event.Base, c *reqCore, k reqOps, submit func(l *uvcgo.Loop, id uint64) (uvcgo.Request, error)) error {
	return openEntry(r, &c.entry, k, func() kind.Handle {
		c.b, c.k = b, k
		eventkind.Init(b, (*reqCoreOps)(c), false, event.GoOwned)
		return (*reqCoreOps)(c)
	}, func(l *uvcgo.Loop, id uint64) (err error) {
		c.req, err = submit(l, id)
		return err
	})
}

func (o *reqCoreOps) Arm() error { return nil }
func (o *reqCoreOps) Disarm()    {}

// Stored makes a completed request replayable to late subscribers.
func (o *reqCoreOps) Stored() (any, error, bool) { return o.res, o.err, o.over }

// Completed is libuv's report: the request is over and its C memory freed.
// An event still open completes with the result; one closed first (Close,
// Dispose, reactor Close) has told its subscribers already.
func (o *reqCoreOps) Completed(rec *uvcgo.Completion) {
	o.req = 0
	o.host.DropHandle(o.id)
	(*reqCore)(o).settle(o.k.done(rec))
}

// settle completes the request's event with its outcome, stored for late
// subscribers, unless it closed first (Close, Dispose, reactor Close): its
// subscribers were told ErrClosed then, and the outcome is nobody's. It
// reports whether the outcome was delivered. On the loop.
func (c *reqCore) settle(res any, err error) bool {
	if c.b.Flags().Has(event.Closed) {
		return false
	}
	c.res, c.err, c.over = res, err, true
	eventkind.Complete(c.b, res, err)
	return true
}

// Free runs when the event closed: a request still in flight is cancelled
// where libuv can; its C callback still comes and frees it.
func (o *reqCoreOps) Free(bool) {
	stopWatching(o.ev)
	if (*reqCore)(o).cancelable() {
		o.k.cancel(o.req)
	}
}

// cancelable reports whether the request is still libuv's to cancel: in
// flight, and not reported in the turn being dispatched. A callback of an
// earlier record of that turn may close it: its C callback has run and the
// shim freed it, and uv_cancel would read freed memory, or cancel another
// request made there since.
func (c *reqCore) cancelable() bool { return c.req != 0 && !c.host.Reported(c.id) }
