// Package eventkind is the API for writing a kind of event, as
// database/sql/driver is the API for writing a database driver: what a kind
// adds to event.Base and the calls it makes on it. Programs that only use
// events never need it; packages reactor, uv and async build their kinds on
// it, and a program can write its own (a sensor reading, a queue's "not
// empty", an adapter over another library's callbacks) that wait, replay
// and report like the built-in ones, in a reactor or outside any
// (event.Serial).
//
// A kind embeds event.Base, implements Ops on a private type (so that Arm,
// Disarm, Free and Describe do not show on the event), calls Init once, and
// then, with the owner held, Notify for each firing of a repeating event or
// Complete for the end of a one-shot one. Replayer makes a stored result
// replayable, StartHolder keeps the Starts a kind holds from a user's
// Stop, AttachFD ties a descriptor to the event's life, and LoopRefs tells
// how many Starts it holds (Subscribers, how many callbacks). A kind whose
// work keeps the loop running beyond its Starts (a request in flight)
// counts it with ActiveDelta, and a fault it finds goes to Report: both
// reach the owner's OwnerHooks, the part of an owner a user does not call.
// The example of Init shows a whole kind in a few lines.
package eventkind

import (
	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/eventlink"
)

// Ops is what a kind of event adds to event.Base: how to arm and disarm it,
// how to free it and how to describe it. Kinds implement Ops on a private
// type so that these methods do not show on the event. Every method is
// called with the owner held.
type Ops interface {
	// Owner returns the loop the event belongs to.
	Owner() event.Owner
	// Event returns the event itself, as callbacks should see it.
	Event() event.Event
	// Arm activates the underlying handle (the first Start). A one-shot
	// event that can complete at once may call Complete from Arm: Start
	// then leaves it closed, not started.
	Arm() error
	// Disarm deactivates it (the last Stop, or Close).
	Disarm()
	// Free releases what the kind holds, once, when the event has closed
	// and its last notification is delivered. free is false when
	// event.NoFreeMemory is set: the memory belongs to someone else.
	Free(free bool)
	// Describe returns the event's Info line.
	Describe() string
}

// Replayer is implemented by the Ops of kinds that store a result: Replay
// and a late event.Subscribe hand it out.
type Replayer interface {
	// Stored returns the stored result; ok is false while there is none.
	Stored() (result any, err error, ok bool)
}

// StartHolder is implemented by the Ops of kinds that hold Starts of their
// event on behalf of others (a poll, one for its started proxies): a
// Stop, which undoes one of the user's Starts, never takes those away.
// When the event holds no more Starts than HeldStarts, Stop is a no-op, as
// for an event not started; the kind takes its own back by lowering
// HeldStarts before it calls Stop.
type StartHolder interface {
	// HeldStarts returns how many of the event's Starts the kind holds;
	// called with the owner held.
	HeldStarts() int
}

// SubscriptionWatcher is implemented by the Ops of kinds told when their
// open event gains a subscriber: a callback, or a wait (event.Await). A
// kind that keeps what it read while no callback would receive it (an
// IO's bytes, a UDP's datagrams) delivers it then, in a later turn, since
// the subscription may come from inside a notification of the event.
type SubscriptionWatcher interface {
	// Subscribed is called with the owner held, after the callback joined.
	Subscribed()
}

// UnsubscriptionWatcher is implemented by the Ops of kinds told when
// their open event loses a subscriber: a kind that receives only while
// someone would take what it reads (a UDP's datagrams) stops then, rather
// than at the next arrival.
type UnsubscriptionWatcher interface {
	// Unsubscribed is called with the owner held, after the callback left.
	Unsubscribed()
}

// OwnerHooks is the part of an event.Owner that events and kinds talk to
// besides Call and Post, found on the Owner by type assertion. A reactor's
// Owner and event.Serial have it; a custom Owner that wants the count of
// active events kept and reports heard implements it. Without it, reports
// go to log/slog's default logger and no count is kept. Both methods are
// called with the owner held, except a report made once the owner has
// closed (a collected event's, when the collector says), which may come
// from any goroutine.
type OwnerHooks interface {
	// ActiveDelta records that n non-hidden events became active (n > 0) or
	// inactive (n < 0): a reactor's Run returns when none is.
	ActiveDelta(n int)
	// Report tells about a fault the program should hear of: a panicking
	// callback, an unhandled error, a result nobody used. It must not block.
	Report(ev event.Event, msg string, err error)
}

// ActiveDelta tells o that n non-hidden events of its became active (n > 0)
// or inactive (n < 0), when o keeps that count (OwnerHooks); call it with
// the owner held. A kind whose work keeps the loop running outside its
// event's Starts (a request in flight) counts that work so.
func ActiveDelta(o event.Owner, n int) {
	if h, ok := o.(OwnerHooks); ok {
		h.ActiveDelta(n)
	}
}

// Report hands a report to o (OwnerHooks), or logs it with log/slog's
// default logger (event.LogReport) when o takes none.
func Report(o event.Owner, ev event.Event, msg string, err error) {
	if h, ok := o.(OwnerHooks); ok {
		h.Report(ev, msg, err)
		return
	}
	event.LogReport(nil, ev, msg, err)
}

// Subscribers returns how many callbacks ev holds; 0 for a nil ev.
func Subscribers(ev event.Event) int { return link.Subscribers(ev) }

// Callbacks returns how many callbacks b holds, waits included: whether a
// notification now would reach anyone. Call it with the owner held (0 for
// a nil b). A kind that keeps what nobody would receive asks it before it
// notifies, and delivers what it kept when told of a new subscriber
// (SubscriptionWatcher).
func Callbacks(b *event.Base) int { return link.Callbacks(b) }

// link holds package event's functions behind this package's (event/kind.go
// fills it).
var link = eventlink.Get[event.Base, event.Event, event.Flags]()

// Init prepares b for a kind. loop says whether Start and Stop arm the event
// in a loop (timers, polls) or do nothing (futures). flags are the initial
// flags (event.GoOwned, event.Hidden, ...).
func Init(b *event.Base, ops Ops, loop bool, flags event.Flags) { link.Init(b, ops, loop, flags) }

// Notify delivers a notification of a periodic or repeating event to its
// subscribers: the event is Fired during the pass and Active again after it
// unless a callback stopped or closed it. It returns event.ErrNestedNotify
// when called from inside a pass over the same event, event.ErrClosed on a
// closed one. Call it with the owner held.
func Notify(b *event.Base, result any, err error) error { return link.Notify(b, result, err) }

// Complete ends a one-shot event: it is stopped and closed first, then its
// subscribers receive the final notification and are released. Its errors
// are Notify's. Call it with the owner held.
func Complete(b *event.Base, result any, err error) error { return link.Complete(b, result, err) }

// AttachFD records fd as the event's descriptor; with closeOnClose the event
// sets event.CloseFD and closes fd when it closes. Call it with the owner
// held.
func AttachFD(b *event.Base, fd int, closeOnClose bool) { link.AttachFD(b, fd, closeOnClose) }

// LoopRefs returns how many Starts ev holds (0 for a nil or zero event).
func LoopRefs(ev event.Event) int { return link.LoopRefs(ev) }

// SetKindBit sets or clears the one flag bit of b that its kind keeps for
// itself (reactor.Timer's "fired since its last Start": a million armed
// timers cost no byte more). event.Flags does not show it. A nil b is left
// alone.
func SetKindBit(b *event.Base, on bool) { link.SetKindBit(b, on) }

// KindBit reports the flag bit b's kind keeps for itself (false for a nil
// b).
func KindBit(b *event.Base) bool { return link.KindBit(b) }
