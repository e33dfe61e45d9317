package uv

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"syscall"
	"weak"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/eventkind"
	"github.com/uvevent/uvevent/internal/kind"
	"github.com/uvevent/uvevent/reactor"
)

// This file holds what the Go-owned kinds of this package share (Signal,
// Process, Command, Task, Thread): none of them has a libuv handle. Their
// work happens in goroutines (os/signal's, the children's reaper, a worker) and
// reaches the loop through Reactor.Post (a Signal's arrivals through the
// kit's Host.Queue, see signalLine.forward).

// checkReactor refuses a nil reactor with an error naming the caller, a
// zero one with reactor.ErrZeroReactor, and a reactor whose Close has
// begun with ErrReactorClosed.
func checkReactor(op string, r *reactor.Reactor) error {
	if err := reactorMade(op, r); err != nil {
		return err
	}
	return armable(r)
}

// reactorMade refuses a nil reactor, and a zero one (reactor.New did not
// make it: no driver turns it), with an error naming the caller and
// matching syscall.EINVAL.
func reactorMade(op string, r *reactor.Reactor) error {
	if r == nil {
		return fmt.Errorf("uv: %s: nil reactor: %w", op, syscall.EINVAL)
	}
	if r.Driver() == reactor.DriverAuto {
		return fmt.Errorf("uv: %s: %w", op, reactor.ErrZeroReactor)
	}
	return nil
}

// armable refuses with ErrReactorClosed once r's Close has begun: the Arm
// of every Go-owned kind here calls it, so that nothing a close
// notification does can start an event again.
func armable(r *reactor.Reactor) error {
	if kind.HostOf(r.Owner()).Closing() {
		return reactor.ErrReactorClosed
	}
	return nil
}

// A reactorCloser is a Go-owned event's registration with its reactor's
// Close (kind.Host.AddCloser): the reactor does not otherwise know the
// started Go-owned events of this package, and its Close must close them
// too, so that their subscribers hear event.ErrClosed (architecture §2,
// rule 7). The zero value is not registered. Loop only (with the
// reactor's ownership), like every Arm and Free.
type reactorCloser struct{ remove func() }

// onReactorClose is the Arm of a Go-owned kind: it refuses with
// ErrReactorClosed once r's Close has begun (armable), else registers e
// with r's Close, once (later Arms find it registered). At Close (on the goroutine
// calling it, with ownership, before libuv's handles close) the hook
// closes e, so its Free runs as for any Close. The hook holds e only
// weakly: an event dropped without Close stays collectable.
func onReactorClose[E any, P interface {
	*E
	event.Event
}](c *reactorCloser, r *reactor.Reactor, e P) error {
	if err := armable(r); err != nil {
		return err
	}
	if c.remove != nil {
		return nil
	}
	wp := weak.Make((*E)(e))
	c.remove = kind.HostOf(r.Owner()).AddCloser(func() {
		if e := wp.Value(); e != nil {
			P(e).Close()
		}
	})
	return nil
}

// forget unregisters the hook; the kind's Free calls it, since a closed
// event has nothing left for the reactor's Close to do.
func (c *reactorCloser) forget() {
	if c.remove != nil {
		c.remove()
		c.remove = nil
	}
}

// trackGo makes h, held by user, the reference for ev, a Go-owned event of
// r standing for a libuv handle: as with the kit's track, dropping user
// without Close while ev is not active closes ev, on the loop. ev holds
// user while started (its Arm calls holdIfArmed, its Disarm and Free
// dropRef).
func trackGo[T any, E interface {
	event.Event
	keeperOf() *keeper
}](user *T, h *handle, r *reactor.Reactor, ev E) {
	h.target = ev
	ev.keeperOf().refPtr = weak.Make(h)
	h.cleanup = runtime.AddCleanup(user, goDropped.close, goDropped{r, ev})
}

// goDropped is what the cleanup trackGo registers needs: the event to
// close and the reactor whose loop closes it. The cleanup is its method,
// not a literal in trackGo, which as a generic function's closure would be
// allocated at every trackGo.
type goDropped struct {
	r  *reactor.Reactor
	ev event.Event
}

// close queues the close of d's event to its loop.
func (d goDropped) close() { d.r.Post(func() { d.ev.Close() }) }

// outcome is the stored result of a one-shot Go-owned kind (Process, Command,
// Task, Thread): written once, then replayed to late subscribers.
type outcome struct {
	claimed atomic.Bool // the first store won
	done    atomic.Bool // result and err are written
	result  any
	err     error
}

// stored implements eventkind.Replayer for the kinds that embed an outcome.
func (o *outcome) stored() (any, error, bool) {
	if !o.done.Load() {
		return nil, nil, false
	}
	return o.result, o.err, true
}

// store writes (result, err) unless an outcome is stored already, and
// reports whether it did. From any goroutine: Replay gives the outcome as
// soon as store returns, before the completion has reached the loop.
func (o *outcome) store(result any, err error) bool {
	if !o.claimed.CompareAndSwap(false, true) {
		return false
	}
	o.result, o.err = result, err
	o.done.Store(true)
	return true
}

// complete completes b with the stored outcome on r's loop: the event
// closes and its subscribers get the outcome as their last notification.
// From any goroutine. after runs on the loop, or here when r is closed.
func (o *outcome) complete(r *reactor.Reactor, b *event.Base, after func()) {
	if perr := r.Post(func() {
		if after != nil {
			after()
		}
		if !b.Flags().Has(event.Closed) {
			eventkind.Complete(b, o.result, o.err)
		}
	}); perr != nil && after != nil {
		after()
	}
}

// deliver stores (result, err) and completes b with it (store, then
// complete); an outcome stored already wins and this one is dropped.
func (o *outcome) deliver(r *reactor.Reactor, b *event.Base, result any, err error, after func()) {
	if o.store(result, err) {
		o.complete(r, b, after)
	}
}
