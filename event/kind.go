package event

import (
	"errors"
	"reflect"

	"github.com/uvevent/uvevent/internal/eventlink"
)

// This file keeps the calls a kind makes on its Base, with the owner held.
// Package eventkind is their public face (and documents them); they reach
// it through internal/eventlink, so they show neither on every event nor
// among this package's names.
func init() {
	eventlink.Set(&eventlink.Funcs[Base, Event, Flags]{
		Init:        func(b *Base, ops any, loop bool, flags Flags) { k, _ := ops.(kindOps); initBase(b, k, loop, flags) },
		Notify:      notifyKind,
		Complete:    complete,
		AttachFD:    attachFD,
		LoopRefs:    loopRefs,
		Subscribers: subscribers,
		KindBit:     kindBitOf,
		SetKindBit:  setKindBit,
		MakerReports: func(b *Base) {
			if !b.unusable() {
				b.setFlags(makerReports)
			}
		},
		Reported: func(b *Base) {
			if !b.unusable() {
				b.setFlags(ErrorCaught)
			}
		},
	})
}

// notifyKind delivers a notification of a repeating event (eventkind.Notify).
func notifyKind(b *Base, result any, err error) error {
	if b.unusable() {
		return ErrNilEvent
	}
	if b.notifying() {
		return ErrNestedNotify
	}
	if b.has(Closed) {
		return ErrClosed
	}
	if b.slowPass(err) {
		return b.notify(b.ops.Event(), result, err)
	}
	b.iter = 0
	b.pass(b.ops.Event(), result, nil)
	b.endPass()
	return nil
}

// complete ends a one-shot event (eventkind.Complete).
func complete(b *Base, result any, err error) error {
	if b.unusable() {
		return ErrNilEvent
	}
	if b.notifying() {
		return ErrNestedNotify
	}
	if b.has(Closed) {
		return ErrClosed
	}
	b.finish(result, err, true)
	return nil
}

// Deref follows an event reference to the event it stands for; any other
// event is returned as is, and so is a reference that stands for none (a
// nil or zero one), whose methods refuse with ErrNilEvent: Deref never
// turns an event into a nil interface.
func Deref(ev Event) Event {
	if r, ok := ev.(interface{ Target() Event }); ok && ev.Flags().Has(Reference) {
		if t := r.Target(); !isNilPointer(t) {
			return t
		}
	}
	return ev
}

// StateOf returns ev's lifecycle state (Created for a nil event).
func StateOf(ev Event) State {
	if isNil(ev) {
		return Created
	}
	b := ev.base()
	if b.has(Closed) {
		return StateClosed // final: no need of the owner, which may be gone
	}
	var s State
	b.exec(func() { s = b.state() })
	return s
}

// OwnerOf returns the owner of ev (for an event reference, of its event),
// or nil for a nil event.
func OwnerOf(ev Event) Owner {
	if isNil(ev) {
		return nil
	}
	return ev.base().owner()
}

// subscribers returns how many callbacks ev holds (eventkind.Subscribers).
func subscribers(ev Event) int {
	if isNil(ev) {
		return 0
	}
	b := ev.base()
	var n int
	b.exec(func() { n = b.cbs.len() })
	return n
}

// loopRefs returns how many Starts ev holds (eventkind.LoopRefs).
func loopRefs(ev Event) int {
	if isNil(ev) {
		return 0
	}
	b := ev.base()
	if b.owner().Owned() {
		return int(b.loopRefs)
	}
	var n int
	b.exec(func() { n = int(b.loopRefs) })
	return n
}

// attachFD records fd as the event's descriptor (eventkind.AttachFD).
func attachFD(b *Base, fd int, closeOnClose bool) {
	if b.unusable() {
		return
	}
	b.extras().fd = fd
	if closeOnClose {
		b.setFlags(CloseFD)
	}
}

// Subscribe is the short way to listen: it adds a new callback calling fn to
// ev and returns it, the creator's reference already given to the event.
// An event that stores its result (a future, a process, a lookup...) and has
// completed already replays it to fn at once instead, on the event's loop,
// so a late subscriber misses nothing; other closed events refuse with
// ErrClosed. A nil fn or a nil event is refused (ErrNilCallback,
// ErrNilEvent).
func Subscribe(ev Event, fn CallbackFunc) (*Callback, error) {
	if fn == nil {
		return nil, ErrNilCallback
	}
	if isNil(ev) {
		return nil, ErrNilEvent
	}
	cb := NewCallback(fn)
	err := ev.AddCallback(cb)
	if errors.Is(err, ErrClosed) {
		if rerr := ev.Replay(cb); rerr == nil {
			err = nil
		}
	}
	cb.Release()
	return cb, err
}

// isNil reports whether ev is nil or a typed nil pointer, or an event whose
// Base was never initialised: none of them can be used.
func isNil(ev Event) bool {
	if ev == nil {
		return true
	}
	if v := reflect.ValueOf(ev); v.Kind() == reflect.Pointer && v.IsNil() {
		return true
	}
	b := baseOf(ev)
	return b == nil || b.ops == nil
}

// baseOf returns ev's Base, or nil when ev cannot give one: an event
// reference whose zero value points at no event panics when asked.
func baseOf(ev Event) (b *Base) {
	ok := false
	defer func() {
		if !ok && recover() != nil {
			b = nil
		}
	}()
	b = ev.base()
	ok = true
	return b
}
