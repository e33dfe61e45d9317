package uv

import (
	"fmt"
	"sync"
	"sync/atomic"

	uvcgo "github.com/uvevent/uvevent/cgo"
	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
)

// A Trigger is a cross-thread wake-up backed by a uv_async_t: Send, from
// any goroutine, makes a started trigger notify its callbacks on the loop
// goroutine. Sends that come before the loop gets to them coalesce into one
// notification (libuv's rule); sends to a stopped trigger are dropped.
//
// A Trigger is an event reference (see Handle): the uv_async_t is C memory,
// freed in its uv_close callback, and dropping the Trigger without Close is
// safe.
type Trigger struct {
	Handle
	e *triggerEvent
}

// triggerEvent is the trigger's event, reachable from the reactor's id
// table until libuv's close callback ran. It never points back at its
// Trigger.
type triggerEvent struct {
	core
	mu    sync.RWMutex // Send holds it shared, so uv_close never races uv_async_send
	armed atomic.Bool  // started: a Send while stopped is dropped at the source

	sent, fired atomic.Uint64
}

// NewTrigger creates a trigger on r. It is not started.
func NewTrigger(r *reactor.Reactor) (*Trigger, error) {
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
func (t *Trigger) Send() error { return t.e.send() }

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

func (e *triggerEvent) describe() string {
	return fmt.Sprintf("Trigger(sent=%d, fired=%d)", e.sent.Load(), e.fired.Load())
}

// lockHandle makes the kit's clearing of the handle wait for Sends in
// progress.
func (e *triggerEvent) lockHandle() func() {
	e.mu.Lock()
	return e.mu.Unlock
}
