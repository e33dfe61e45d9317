package uv

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	uvcgo "github.com/uvevent/uvevent/cgo"
	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/kind"
	"github.com/uvevent/uvevent/reactor"
)

// A Trigger is a cross-thread wake-up: Send, from any goroutine, makes a
// started trigger notify its callbacks on the loop goroutine. Sends that
// come before the loop gets to them coalesce into one notification
// (libuv's rule); sends to a stopped trigger are dropped.
//
// On the libuv driver it is a uv_async_t and the Trigger is an event
// reference (see Handle): the handle is C memory, freed in its uv_close
// callback, and dropping the Trigger without Close is safe. On the pure-Go
// driver it is a Go-owned event with the same behaviour.
type Trigger struct {
	Handle
	e sender
}

// sender is a trigger's event on either driver.
type sender interface{ send() error }

// NewTrigger creates a trigger on r. It is not started.
func NewTrigger(r *reactor.Reactor) (*Trigger, error) {
	if r != nil && r.Driver() == reactor.DriverGo {
		return newGoTrigger(r)
	}
	e := &triggerEvent{}
	if err := newCore(r, &e.core, e, 0, func(l *uvcgo.Loop, id uint64) (uvcgo.Handle, error) {
		return l.NewAsync(id)
	}); err != nil {
		return nil, err
	}
	t := &Trigger{e: e}
	track(t, &t.Handle, &e.core)
	return t, nil
}

// Send wakes the loop and makes the trigger notify. Safe from any goroutine;
// it returns event.ErrClosed once the trigger is closed. A Send while the
// trigger is stopped is dropped (a later Start does not deliver it).
func (t *Trigger) Send() error {
	if t == nil || t.e == nil {
		return event.ErrNilEvent
	}
	return t.e.send()
}

// triggerCounts is what both drivers' triggers count, for Info.
type triggerCounts struct {
	armed       atomic.Bool // started: a Send while stopped is dropped at the source
	sent, fired atomic.Uint64
}

func (c *triggerCounts) describe() string {
	return fmt.Sprintf("Trigger(sent=%d, fired=%d)", c.sent.Load(), c.fired.Load())
}

// triggerEvent is the libuv trigger's event, reachable from the reactor's
// id table until libuv's close callback ran. It never points back at its
// Trigger.
type triggerEvent struct {
	core
	triggerCounts
	mu sync.RWMutex // send holds it shared, so uv_close never races uv_async_send
}

func (e *triggerEvent) send() error {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.h == 0 {
		return event.ErrClosed
	}
	if !e.armed.Load() {
		return nil
	}
	e.sent.Add(1)
	return e.loop.AsyncSend(e.h)
}

func (e *triggerEvent) completed(*uvcgo.Completion) {
	e.fired.Add(1)
	event.Notify(&e.Base, nil, nil)
}

func (e *triggerEvent) kindName() string { return "trigger" }
func (e *triggerEvent) closing()         {}
func (e *triggerEvent) disarm()          { e.armed.Store(false) }

func (e *triggerEvent) arm() error {
	e.armed.Store(true)
	return nil
}

// lockHandle makes the kit's clearing of the handle wait for sends in
// progress.
func (e *triggerEvent) lockHandle() func() {
	e.mu.Lock()
	return e.mu.Unlock
}

// goTrigger is the pure-Go driver's trigger: a send posts one notification
// to the loop; sends before it runs coalesce.
type goTrigger struct {
	event.Base
	triggerCounts
	r       *reactor.Reactor
	pending atomic.Bool // a notification is posted and not yet run
	closed  atomic.Bool
	forget  func() // unregisters the reactor's closer
}

type goTriggerOps goTrigger

func newGoTrigger(r *reactor.Reactor) (*Trigger, error) {
	e := &goTrigger{r: r}
	event.Init(&e.Base, (*goTriggerOps)(e), true, event.GoOwned)
	var err error
	if x := r.Exec(func() {
		host := kind.HostOf(r)
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
	// As on the libuv driver, a Trigger dropped without Close is closed
	// (so a started one stops counting as active).
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
	if err := kind.HostOf(e.r).Queue(e.deliver); err != nil {
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
	event.Notify(&e.Base, nil, nil)
}

func (o *goTriggerOps) Owner() event.Owner { return o.r }
func (o *goTriggerOps) Event() event.Event { return (*goTrigger)(o) }
func (o *goTriggerOps) Describe() string   { return o.describe() }
func (o *goTriggerOps) Disarm()            { o.armed.Store(false) }
func (o *goTriggerOps) Free(bool) {
	o.closed.Store(true)
	o.forget()
}
func (o *goTriggerOps) Arm() error {
	if err := armable(o.r); err != nil {
		return err
	}
	o.armed.Store(true)
	return nil
}
