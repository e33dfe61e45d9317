package uv

// The pure-Go driver's trigger: a send queues one delivery on the loop
// through the reactor, as uv_async_send wakes libuv's loop.

import (
	"runtime"
	"sync/atomic"
	"weak"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/eventkind"
	"github.com/uvevent/uvevent/internal/kind"
	"github.com/uvevent/uvevent/reactor"
)

// goTrigger is the pure-Go driver's trigger: a send posts one notification
// to the loop; sends before it runs coalesce.
type goTrigger struct {
	event.Base
	keeper
	triggerCounts
	r       *reactor.Reactor
	pending atomic.Bool // a notification is posted and not yet run
	closed  atomic.Bool
	forget  func() // unregisters the reactor's closer
}

type goTriggerOps goTrigger

func newGoTrigger(r *reactor.Reactor) (*Trigger, error) {
	e := &goTrigger{r: r}
	eventkind.Init(&e.Base, (*goTriggerOps)(e), true, event.GoOwned)
	var err error
	if x := r.Call(func() {
		host := kind.HostOf(r.Owner())
		if host.Closing() {
			err = reactor.ErrReactorClosed
			return
		}
		// The closer holds the event, not the Trigger: a dropped Trigger
		// is still collected, and its cleanup closes the event (which
		// unregisters this); if the reactor is closing by then, the closer
		// closes it instead, so a started trigger never stays counted.
		e.forget = host.AddCloser(func() { e.Close() })
	}); x != nil {
		return nil, x
	}
	if err != nil {
		return nil, err
	}
	t := &Trigger{e: e}
	t.target = e
	e.refPtr = weak.Make(&t.handle)
	// As on the libuv driver, a Trigger dropped without Close while
	// stopped is closed (a started one holds it: keeper).
	t.cleanup = runtime.AddCleanup(t, func(e *goTrigger) { e.r.Post(func() { e.Close() }) }, e)
	return t, nil
}

func (e *goTrigger) send() error {
	if e.closed.Load() {
		return event.ErrClosed
	}
	if !e.armed.Load() {
		return nil
	}
	e.sent.Add(1)
	if !e.pending.CompareAndSwap(false, true) {
		return nil // coalesced with the notification already posted
	}
	if err := kind.HostOf(e.r.Owner()).Queue(e.deliver); err != nil {
		e.pending.Store(false)
		return event.ErrClosed
	}
	return nil
}

// deliver runs on the loop.
func (e *goTrigger) deliver() {
	e.pending.Store(false)
	if !e.armed.Load() || e.closed.Load() {
		return
	}
	e.fired.Add(1)
	eventkind.Notify(&e.Base, nil, nil)
}

func (o *goTriggerOps) Owner() event.Owner { return o.r.Owner() }
func (o *goTriggerOps) Event() event.Event { return (*goTrigger)(o) }
func (o *goTriggerOps) Describe() string   { return o.describe() }
func (o *goTriggerOps) Disarm() {
	o.armed.Store(false)
	o.dropRef()
}
func (o *goTriggerOps) Free(bool) {
	o.dropRef()
	o.closed.Store(true)
	o.forget()
}
func (o *goTriggerOps) Arm() error {
	if err := o.startable(o.r); err != nil {
		return err
	}
	o.armed.Store(true)
	o.holdRef()
	return nil
}
