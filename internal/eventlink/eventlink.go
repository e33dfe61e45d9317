// Package eventlink carries the calls of package eventkind (the public API
// for writing a kind of event) to the unexported code of package event that
// keeps them, so that they do not show among event's names.
//
// Package event fills these variables when it is initialised; eventkind
// imports event, so they are set before any of its functions can run. Each
// holds a function of the type written beside it; eventkind asserts it once.
package eventlink

var (
	// Init: func(*event.Base, any, bool, event.Flags); the any is the
	// kind's ops, asserted by event to its ops interface.
	Init any
	// Notify and Complete: func(*event.Base, any, error) error.
	Notify, Complete any
	// AttachFD: func(*event.Base, int, bool).
	AttachFD any
	// LoopRefs and Subscribers: func(event.Event) int.
	LoopRefs, Subscribers any
	// KindBit: func(*event.Base) bool; SetKindBit: func(*event.Base, bool).
	KindBit, SetKindBit any
)
