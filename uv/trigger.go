package uv

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"

	uvcgo "github.com/uvevent/uvevent/cgo"
	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/eventref"
	"github.com/uvevent/uvevent/internal/kind"
	"github.com/uvevent/uvevent/reactor"
)

// A Trigger is a cross-thread wake-up backed by a uv_async_t: Send, from
// any goroutine, makes a started trigger notify its callbacks on the loop
// goroutine. Sends that come before the loop gets to them coalesce into one
// notification (libuv's rule); sends to a stopped trigger are dropped.
//
// *Trigger is an event reference (flag Reference): the uv_async_t is
// malloc'd by the C shim and freed in its uv_close callback; the reactor
// reaches it by id. Dropping the *Trigger without Close releases the
// reference through runtime.AddCleanup, which closes the handle on the next
// loop turn. A callback that captures its own *Trigger keeps it reachable
// from the reactor (through the event's callbacks), so it is never collected:
// in callbacks, use the event they are given instead.
type Trigger struct {
	*triggerEvent
	released atomic.Bool
	cleanup  runtime.Cleanup
}

// triggerEvent is the event itself, reachable from the reactor's id table
// until libuv's close callback ran. It never points back at its Trigger.
type triggerEvent struct {
	event.Base
	r    *reactor.Reactor
	host kind.Host
	loop *uvcgo.Loop // for AsyncSend, the one call made off the loop goroutine
	id   eventref.ID

	mu    sync.RWMutex // Send holds it shared, so uv_close never races uv_async_send
	h     uvcgo.Handle // 0 once closing
	armed atomic.Bool  // started: a Send while stopped is dropped at the source

	sent, fired atomic.Uint64
}

type triggerOps triggerEvent

// NewTrigger creates a trigger on r. It is not started.
func NewTrigger(r *reactor.Reactor) (*Trigger, error) {
	if r == nil {
		return nil, fmt.Errorf("uv: NewTrigger: nil reactor: %w", syscall.EINVAL)
	}
	var t *Trigger
	var err error
	if e := r.Exec(func() {
		host := kind.HostOf(r)
		ev := &triggerEvent{r: r, host: host, loop: host.Loop()}
		event.Init(&ev.Base, (*triggerOps)(ev), true, 0)
		ev.id = host.AddHandle((*triggerOps)(ev))
		h, cerr := ev.loop.NewAsync(uint64(ev.id))
		if cerr != nil {
			host.DropHandle(ev.id)
			err = cerr
			return
		}
		ev.h = h
		t = &Trigger{triggerEvent: ev}
		t.cleanup = eventref.Track(t, host, ev.id)
	}); e != nil {
		return nil, e
	}
	return t, err
}

// Send wakes the loop and makes the trigger notify. Safe from any goroutine;
// it returns ErrClosed once the trigger is closed. A Send while the trigger
// is stopped is dropped (a later Start does not deliver it).
func (e *triggerEvent) Send() error {
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

// Flags returns the event's flags plus Reference: a *Trigger stands for
// the event.
func (t *Trigger) Flags() event.Flags { return t.triggerEvent.Flags() | event.Reference }

// Target returns the event the reference stands for (see event.Resolve).
func (t *Trigger) Target() event.Event { return t.triggerEvent }

// Close closes the trigger now, for every holder, and gives up this
// reference. Closing twice is a no-op.
func (t *Trigger) Close() error {
	err := t.triggerEvent.Close()
	t.Dispose()
	return err
}

// Dispose drops one reference. The first Dispose gives up the hold of this
// event reference (and its cleanup); later ones drop references taken with
// Retain. The event closes when its last reference goes; a Dispose after
// that does nothing.
func (t *Trigger) Dispose() {
	if t.released.CompareAndSwap(false, true) {
		t.cleanup.Stop()
		t.triggerEvent.Dispose()
		return
	}
	if !t.triggerEvent.Flags().Has(event.Closed) {
		t.triggerEvent.Dispose()
	}
}

// Completed runs on the loop for each uv_async_t callback.
func (o *triggerOps) Completed(c uvcgo.Completion) {
	e := (*triggerEvent)(o)
	if event.LoopRefs(e) == 0 || e.Flags().Has(event.Closed) {
		return
	}
	e.fired.Add(1)
	event.Notify(&e.Base, nil, nil)
}

func (o *triggerOps) Kind() string             { return "trigger" }
func (o *triggerOps) HandleEvent() event.Event { return (*triggerEvent)(o) }
func (o *triggerOps) Owner() event.Owner       { return o.r }
func (o *triggerOps) Event() event.Event       { return (*triggerEvent)(o) }
func (o *triggerOps) Arm() error {
	o.armed.Store(true)
	return nil
}

func (o *triggerOps) Disarm() { o.armed.Store(false) }
func (o *triggerOps) Describe() string {
	return fmt.Sprintf("Trigger(sent=%d, fired=%d)", o.sent.Load(), o.fired.Load())
}

// Free closes the uv_async_t; libuv's close callback frees it. A trigger's
// memory is always its own, so NoFreeMemory does not apply.
func (o *triggerOps) Free(bool) {
	o.mu.Lock()
	h := o.h
	o.h = 0
	o.mu.Unlock()
	if h != 0 {
		o.host.CloseHandle(h)
	}
}
