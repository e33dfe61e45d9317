package uv

import (
	"fmt"
	"sync/atomic"

	"github.com/uvevent/uvevent/event"
	uvcgo "github.com/uvevent/uvevent/internal/cgo"
	"github.com/uvevent/uvevent/reactor"
)

// A Trigger is a cross-thread wake-up: Send, from any goroutine, makes a
// started trigger notify its callbacks on the loop goroutine. Sends that
// come before the loop gets to them coalesce into one notification
// (libuv's rule); sends to a stopped trigger are dropped.
//
// On the libuv driver it is a uv_async_t and the Trigger is an event
// reference (see Lifetime in the package doc): the handle is C memory, freed in its uv_close
// callback, and dropping a stopped Trigger without Close is safe (a started
// one is held by its reactor). On the pure-Go
// driver it is a Go-owned event with the same behaviour.
type Trigger struct {
	handle
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
	track(t, &t.handle, &e.core)
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
