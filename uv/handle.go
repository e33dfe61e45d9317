package uv

import (
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"syscall"
	"weak"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/eventkind"
	"github.com/uvevent/uvevent/eventref"
	uvcgo "github.com/uvevent/uvevent/internal/cgo"
	"github.com/uvevent/uvevent/internal/kind"
	"github.com/uvevent/uvevent/reactor"
)

// This file is the kind kit: what every C-owned kind shares, written once.
// A kind is two objects. Its event (a struct embedding core) lives in the
// reactor's id table from creation until libuv's close callback has freed
// the C handle. The object the user holds (a struct embedding handle) is the
// event reference: it points at the event, and the event points back at it
// only while it is active (keeper), so the collector can take a reference
// whose event is stopped, and its cleanup only queues the close on the loop
// goroutine.

// handle is the event reference that every C-owned kind (Trigger, Poll,
// Listener, ...) embeds: the methods of event.Event, plus Target, on the
// object the user holds, listed by go doc on each kind. The libuv handle
// behind it is malloc'd by the C shim and freed in its uv_close callback;
// handle holds no C pointer.
//
// A started event is held by its reactor until Stop, Close or the
// reactor's Close, whether or not the program still points at it: a
// listener, connection or watch set up in a helper function keeps serving,
// as in libuv and Node. Dropping a reference that is not started without
// Close is safe: runtime.AddCleanup queues the close of its event on the
// loop goroutine, and libuv frees the handle on the next loop turn; until
// then, a Start of the event by whoever still holds it (Target) is refused
// with an error matching event.ErrClosed. A
// callback that captures its own reference keeps it reachable, so it is
// never collected: in callbacks, use the event they are given.
//
// A kind's zero value is not usable; its constructor returns a ready one.
type handle struct {
	target
	released atomic.Bool
	cleanup  runtime.Cleanup
}

// target is the event a handle stands for; embedding it under this name
// makes handle an event.Event without exporting the field.
type target = event.Event

// AddCallback subscribes cb; see event.Event.
func (h *handle) AddCallback(cb *event.Callback) error {
	if h.zero() {
		return event.ErrNilEvent
	}
	return h.target.AddCallback(cb)
}

// DelCallback unsubscribes cb; see event.Event.
func (h *handle) DelCallback(cb *event.Callback) error {
	if h.zero() {
		return event.ErrNilEvent
	}
	return h.target.DelCallback(cb)
}

// Start activates the handle in its loop; starting a started handle only
// counts. It returns event.ErrClosed once closed, and ErrReactorClosed once
// the reactor's Close has begun.
func (h *handle) Start() error {
	if h.zero() {
		return event.ErrNilEvent
	}
	return h.target.Start()
}

// Stop undoes one Start; the last one deactivates the handle. Records libuv
// reported in the same turn, after the Stop, are not delivered.
func (h *handle) Stop() error {
	if h.zero() {
		return event.ErrNilEvent
	}
	return h.target.Stop()
}

// Replay delivers the stored result to cb, for kinds that store one.
func (h *handle) Replay(cb *event.Callback) error {
	if h.zero() {
		return event.ErrNilEvent
	}
	return h.target.Replay(cb)
}

// Info describes the handle in one line, e.g. "Trigger(sent=3, fired=1)".
func (h *handle) Info() string {
	if h.zero() {
		return "event(zero value: not made by a constructor)"
	}
	return h.target.Info()
}

// SetNotifyHook installs a hook that intercepts notifications (nil removes it).
func (h *handle) SetNotifyHook(hook event.NotifyHook) error {
	if h.zero() {
		return event.ErrNilEvent
	}
	return h.target.SetNotifyHook(hook)
}

// SetHidden marks the event hidden, or not: a hidden event does not count
// as active, so it neither keeps the reactor's Run going nor keeps a
// deadlock from being reported, and while started it still delivers as
// long as something else keeps the loop turning. It is libuv's uv_unref
// (SetHidden(true)) and uv_ref (SetHidden(false)), Node's unref() and
// ref(); the Go-owned kinds have the same method (event.Base.SetHidden). A
// hidden started event is still held by its reactor (see Lifetime in the
// package doc).
func (h *handle) SetHidden(hidden bool) error {
	if h.zero() {
		return event.ErrNilEvent
	}
	s, ok := h.target.(interface{ SetHidden(bool) error })
	if !ok {
		return fmt.Errorf("uv: SetHidden: %s cannot be hidden: %w", h.target.Info(), errors.ErrUnsupported)
	}
	return s.SetHidden(hidden)
}

// Retain adds a reference to the event; each needs its own Dispose. A
// Retain after the last Dispose is refused and reported (see
// event.Base.Retain).
func (h *handle) Retain() {
	if !h.zero() {
		h.target.Retain()
	}
}

// Flags returns the event's flags plus Reference: the kind stands for the
// event.
func (h *handle) Flags() event.Flags {
	if h.zero() {
		return event.Reference
	}
	return h.target.Flags() | event.Reference
}

// Target returns the event the reference stands for (see event.Deref).
func (h *handle) Target() event.Event {
	if h == nil {
		return nil
	}
	return h.target
}

// Close closes the handle now, for every holder, and gives up this
// reference. Closing twice is a no-op.
func (h *handle) Close() error {
	if h.zero() {
		return event.ErrNilEvent
	}
	err := h.target.Close()
	h.Dispose()
	return err
}

// Dispose drops one reference. The first Dispose gives up the hold of this
// event reference (and its cleanup); later ones drop references taken with
// Retain. The event closes when its last reference goes; a Dispose after
// that does nothing.
func (h *handle) Dispose() {
	if h.zero() {
		return
	}
	if h.released.CompareAndSwap(false, true) {
		h.target.Dispose()
		if h.target.Flags().Has(event.Closed) {
			h.cleanup.Stop()
		}
		// Otherwise references taken with Retain remain: the cleanup
		// stays, so that dropping this object still closes the event.
		return
	}
	if !h.target.Flags().Has(event.Closed) {
		h.target.Dispose()
	}
}

// zero reports a handle no constructor made (a kind's zero value): every
// method refuses it with event.ErrNilEvent instead of dereferencing nil.
func (h *handle) zero() bool { return h == nil || h.target == nil }

// core is the event half of a C-owned kind: the kind's event struct embeds
// it and implements kindOps. Its fields are touched with the owner held,
// except h, which a kind whose calls come from other goroutines (Trigger's
// Send) guards itself.
type core struct {
	event.Base
	entry
	keeper
	h uvcgo.Handle // 0 once closing
	k kindOps
}

// entry is what handle and request kinds share: their reactor, their id in
// its table, and the kind's event. The methods of eventkind.Ops and
// kind.Handle that answer from it are written on the ops types (coreOps,
// reqCoreOps), not on entry, so that an entry embedded in a user's type (a
// request's) promotes none of them.
type entry struct {
	r    *reactor.Reactor
	host kind.Host
	loop *uvcgo.Loop
	id   eventref.ID
	ev   entryKind
}

// entryKind is what every kind's event gives the kit.
type entryKind interface {
	event.Event
	kindName() string
	describe() string
}

// kind and info answer Kind and Describe for the ops types, a zero event
// included.
func (o *entry) kind() string {
	if o.ev == nil {
		return "" // a zero event
	}
	return o.ev.kindName()
}

func (o *entry) info() string {
	if o.ev == nil {
		return "event(" + event.ErrNilEvent.Error() + ")"
	}
	return o.ev.describe()
}

// enter makes the entry for kind ev on r; it runs on the loop and refuses a
// closing reactor.
func (o *entry) enter(r *reactor.Reactor, ev entryKind) error {
	host := kind.HostOf(r.Owner())
	if host.Closing() {
		return reactor.ErrReactorClosed
	}
	if host.Loop() == nil {
		return fmt.Errorf("uv: %s needs the libuv driver (this reactor runs the pure-Go one): %w", ev.kindName(), reactor.ErrNoLibuv)
	}
	*o = entry{r: r, host: host, loop: host.Loop(), ev: ev}
	return nil
}

// kindOps is what a kind adds to core: the kit calls these with the owner
// held.
type kindOps interface {
	entryKind
	// arm and disarm start and stop the libuv handle.
	arm() error
	disarm()
	// completed handles a record for a started, open event, or a request
	// completion whatever the event's state.
	completed(rec *uvcgo.Completion)
	// closing runs when the event closes, before its handle is closed:
	// requests in flight are failed with event.ErrClosed here.
	closing()
}

// coreOps implements eventkind.Ops and kind.Handle for core, so that these
// methods do not show on the kinds.
type coreOps core

func (o *coreOps) Owner() event.Owner       { return o.r.Owner() }
func (o *coreOps) Event() event.Event       { return o.ev }
func (o *coreOps) HandleEvent() event.Event { return o.ev }
func (o *coreOps) Kind() string             { return o.entry.kind() }
func (o *coreOps) Describe() string         { return o.entry.info() }

// Subscribed tells a kind that keeps what no callback would receive (an
// IO's reads, a UDP's datagrams) that its event gained a subscriber
// (eventkind.SubscriptionWatcher).
func (o *coreOps) Subscribed() {
	if w, ok := o.ev.(subscriptionWatcher); ok {
		w.subscribed()
	}
}

// subscriptionWatcher is a kind's event told of a new subscriber.
type subscriptionWatcher interface{ subscribed() }

// Unsubscribed tells a kind that receives only while a callback would
// take what it reads (a UDP's datagrams) that its event lost a subscriber
// (eventkind.UnsubscriptionWatcher).
func (o *coreOps) Unsubscribed() {
	if w, ok := o.ev.(unsubscriptionWatcher); ok {
		w.unsubscribed()
	}
}

// unsubscriptionWatcher is a kind's event told of a subscriber gone.
type unsubscriptionWatcher interface{ unsubscribed() }

// newCore creates a kind's event on r: k is the kind's event, whose core is
// c; create makes the C handle for the id the event gets. It runs on the
// loop; it refuses a nil reactor (EINVAL) and a closing one.
func newCore(r *reactor.Reactor, c *core, k kindOps, flags event.Flags, create func(l *uvcgo.Loop, id uint64) (uvcgo.Handle, error)) error {
	return onLoop(r, func() error { return openCore(r, c, k, flags, create) })
}

// openCore is newCore's work, on the loop. Its functions are only called,
// never kept: a caller already on the loop (an accept) calls it directly,
// and then none of them goes to the heap.
func openCore(r *reactor.Reactor, c *core, k kindOps, flags event.Flags, create func(l *uvcgo.Loop, id uint64) (uvcgo.Handle, error)) error {
	return c.entry.open(r, k, func() kind.Handle {
		c.k = k
		eventkind.Init(&c.Base, (*coreOps)(c), true, flags)
		return (*coreOps)(c)
	}, func(l *uvcgo.Loop, id uint64) (err error) {
		c.h, err = create(l, id)
		return err
	})
}

// openEntry enters kind ev in r's table, on the loop: setup initialises
// the event and returns its table record; create makes the C side for the
// id the entry got (if it fails, the entry is dropped).
func openEntry(r *reactor.Reactor, e *entry, ev entryKind, setup func() kind.Handle, create func(l *uvcgo.Loop, id uint64) error) error {
	return onLoop(r, func() error { return e.open(r, ev, setup, create) })
}

// onLoop runs fn on r's loop and returns its error; a nil reactor is
// EINVAL, a closing one the reactor's error.
func onLoop(r *reactor.Reactor, fn func() error) error {
	if r == nil {
		return fmt.Errorf("uv: nil reactor: %w", syscall.EINVAL)
	}
	var err error
	if x := r.Call(func() { err = fn() }); x != nil {
		return x
	}
	return err
}

// open is openEntry's work, on the loop; setup and create are only called.
func (e *entry) open(r *reactor.Reactor, ev entryKind, setup func() kind.Handle, create func(l *uvcgo.Loop, id uint64) error) error {
	if err := e.enter(r, ev); err != nil {
		return err
	}
	e.id = e.host.AddHandle(setup())
	if err := create(e.loop, uint64(e.id)); err != nil {
		e.host.DropHandle(e.id)
		return err
	}
	return nil
}

// track makes h the reference for c's event and registers the cleanup that
// closes the event if user, the object holding h, is dropped without Close
// while the event is not active (see keeper).
func track[T any](user *T, h *handle, c *core) {
	h.target = c.k
	c.keeper.refPtr = weak.Make(h)
	h.cleanup = eventref.Track(user, c.host, c.id)
}

// keeper is the reactor's hold on the reference of an active event: the
// model's rule that an active event is the loop's, not the collector's
// (docs/architecture.md §5). Every C-owned kind's event embeds one, on either driver. The
// event is reachable while its reference is (from the reactor's id table,
// or from the argument of the reference's cleanup), and the reference is
// never reachable from it while it is stopped: refHeld points at the
// reference from the first Start (Arm) to the last Stop (Disarm) or the
// close (Free), so the reference's cleanup, which closes the event, can
// only run once the event is inactive. Loop only.
type keeper struct {
	refPtr  weak.Pointer[handle] // the reference, set by track or trackGo
	refHeld *handle              // refPtr's object while the event is started
}

// holdRef holds the reference while the event is active.
func (k *keeper) holdRef() { k.refHeld = k.refPtr.Value() }

// errCollected refuses the start of an event whose reference the collector
// took.
var errCollected = fmt.Errorf("uv: the event's reference was collected, its close is queued: %w", event.ErrClosed)

// collected refuses, with errCollected, to start an event whose reference
// was collected: its cleanup has queued the close, and whoever still holds
// the event (its Target) would start it for results that nobody can read
// through the reference (event.On), such as connections taken from the
// kernel only to be closed. Loop only, as Arm is.
func (k *keeper) collected() error {
	if k.refPtr != (weak.Pointer[handle]{}) && k.refPtr.Value() == nil {
		return errCollected
	}
	return nil
}

// startable is armable for a Go-driver kind with a reference: it also
// refuses to start once the reference was collected (collected).
func (k *keeper) startable(r *reactor.Reactor) error {
	if err := armable(r); err != nil {
		return err
	}
	return k.collected()
}

// dropRef gives the reference back to the collector.
func (k *keeper) dropRef() { k.refHeld = nil }

// holdIfArmed holds the reference once a Go-driver kind's Arm returned
// err, if it succeeded, and returns err.
func (k *keeper) holdIfArmed(err error) error {
	if err == nil {
		k.holdRef()
	}
	return err
}

func (k *keeper) keeperOf() *keeper { return k }

func (o *coreOps) Disarm() {
	o.k.disarm()
	o.dropRef()
}

// HeldStarts: the Starts a kind holds of its own event on behalf of others
// (a poll's, for its started proxies), which a Stop leaves (see
// event.Event's Stop); none for most kinds.
func (o *coreOps) HeldStarts() int {
	if h, ok := o.k.(interface{ heldStarts() int }); ok {
		return h.heldStarts()
	}
	return 0
}

func (o *coreOps) Arm() error {
	if o.host.Closing() {
		return reactor.ErrReactorClosed
	}
	if err := o.collected(); err != nil {
		return err
	}
	if err := o.k.arm(); err != nil {
		return err
	}
	o.holdRef()
	return nil
}

// Completed delivers a record to the kind: handle records only while the
// event is started and open (a Stop or Close in an earlier callback of the
// same turn holds back the rest) or, while it is open, when the kind wants
// them for work of its own; request completions always.
func (o *coreOps) Completed(rec *uvcgo.Completion) {
	if !rec.Request() && (o.Flags().Has(event.Closed) || eventkind.LoopRefs(o.k) == 0 && !o.wanted(rec)) {
		return
	}
	o.k.completed(rec)
}

// wanted asks a kind that does work for its own methods while it is not
// started (an IO's blocking reads) whether it wants rec all the same.
func (o *coreOps) wanted(rec *uvcgo.Completion) bool {
	w, ok := o.k.(interface {
		wants(rec *uvcgo.Completion) bool
	})
	return ok && w.wants(rec)
}

// Free closes the libuv handle; its close callback frees the memory. A
// C-owned kind's memory is always its own, so NoFreeMemory does not apply.
func (o *coreOps) Free(bool) {
	o.dropRef()
	o.k.closing()
	if h := o.takeHandle(); h != 0 {
		if c, ok := o.k.(interface{ closeHandle(h uvcgo.Handle) }); ok {
			c.closeHandle(h) // a kind that closes its handle its own way (an IO's lingering close)
			return
		}
		o.host.CloseHandle(h)
	}
}

// takeHandle clears h; kinds whose calls come from other goroutines wrap it
// in their own lock.
func (o *coreOps) takeHandle() uvcgo.Handle {
	if l, ok := o.k.(interface{ lockHandle() func() }); ok {
		defer l.lockHandle()()
	}
	h := o.h
	o.h = 0
	return h
}
