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
// how many Starts it holds. The example of Init shows a whole kind in a
// few lines.
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

var (
	initBase = eventlink.Init.(func(*event.Base, any, bool, event.Flags))
	notify   = eventlink.Notify.(func(*event.Base, any, error) error)
	complete = eventlink.Complete.(func(*event.Base, any, error) error)
	attachFD = eventlink.AttachFD.(func(*event.Base, int, bool))
	loopRefs = eventlink.LoopRefs.(func(event.Event) int)
	kindBit  = eventlink.KindBit.(func(*event.Base) bool)
	setBit   = eventlink.SetKindBit.(func(*event.Base, bool))
)

// Init prepares b for a kind. loop says whether Start and Stop arm the event
// in a loop (timers, polls) or do nothing (futures). flags are the initial
// flags (event.GoOwned, event.Hidden, ...).
func Init(b *event.Base, ops Ops, loop bool, flags event.Flags) { initBase(b, ops, loop, flags) }

// Notify delivers a notification of a periodic or repeating event to its
// subscribers: the event is Fired during the pass and Active again after it
// unless a callback stopped or closed it. It returns event.ErrNestedNotify
// when called from inside a pass over the same event, event.ErrClosed on a
// closed one. Call it with the owner held.
func Notify(b *event.Base, result any, err error) error { return notify(b, result, err) }

// Complete ends a one-shot event: it is stopped and closed first, then its
// subscribers receive the final notification and are released. Its errors
// are Notify's. Call it with the owner held.
func Complete(b *event.Base, result any, err error) error { return complete(b, result, err) }

// AttachFD records fd as the event's descriptor; with closeOnClose the event
// sets event.CloseFD and closes fd when it closes. Call it with the owner
// held.
func AttachFD(b *event.Base, fd int, closeOnClose bool) { attachFD(b, fd, closeOnClose) }

// LoopRefs returns how many Starts ev holds (0 for a nil or zero event).
func LoopRefs(ev event.Event) int { return loopRefs(ev) }

// SetKindBit sets or clears the one flag bit of b that its kind keeps for
// itself (reactor.Timer's "reusable": a million armed timers cost no byte
// more). event.Flags does not show it. A nil b is left alone.
func SetKindBit(b *event.Base, on bool) { setBit(b, on) }

// KindBit reports the flag bit b's kind keeps for itself (false for a nil
// b).
func KindBit(b *event.Base) bool { return kindBit(b) }
