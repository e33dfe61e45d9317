package uv

// The libuv driver's trigger: a uv_async_t (internal/cgo/async.c).

import (
	"sync"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/eventkind"
	uvcgo "github.com/uvevent/uvevent/internal/cgo"
)

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
	eventkind.Notify(&e.Base, nil, nil)
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
