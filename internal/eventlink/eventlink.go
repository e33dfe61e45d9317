// Package eventlink carries the calls of package eventkind (the public API
// for writing a kind of event), and one of package reactor, to the
// unexported code of package event that keeps them, so that they do not
// show among event's names.
//
// Funcs is the link, typed: event/kind.go fills one with its functions
// (each field's doc names the function) and records it with Set from its
// init; eventkind/eventkind.go takes it with Get and calls its fields.
// Dependencies stay one-way (event and eventkind import this package; it
// imports neither), so Funcs names event's types through its type
// parameters: B is event.Base, E event.Event, F event.Flags. A field set to
// a function of another type does not compile.
package eventlink

// Funcs are the calls a kind makes on its event.Base, with the owner held.
type Funcs[B, E, F any] struct {
	// Init prepares b for a kind (event's initBase); ops is the kind's
	// eventkind.Ops, asserted by event to its own interface.
	Init func(b *B, ops any, loop bool, flags F)
	// Notify delivers a notification of a repeating event (notifyKind).
	Notify func(b *B, result any, err error) error
	// Complete completes a one-shot event with its result (complete).
	Complete func(b *B, result any, err error) error
	// AttachFD ties a descriptor to the event (attachFD).
	AttachFD func(b *B, fd int, closeOnClose bool)
	// LoopRefs returns the references the loop holds on ev (loopRefs).
	LoopRefs func(ev E) int
	// Subscribers returns how many callbacks ev holds (subscribers).
	Subscribers func(ev E) int
	// Callbacks returns how many callbacks b holds, with the owner held
	// (callbacksOf).
	Callbacks func(b *B) int
	// KindBit and SetKindBit read and set the bit a kind keeps in the
	// event's flags (kindBitOf, setKindBit).
	KindBit    func(b *B) bool
	SetKindBit func(b *B, on bool)
	// MakerReports says that the maker of a new future watches for its
	// collection itself (a reactor's coroutine does, to name where it was
	// spawned): the future arranges no report of its own. Package reactor
	// calls it.
	MakerReports func(b *B)
	// Reported marks the error of a failed event as caught: its maker
	// reported it, or it needs no report (the program cancelled the
	// work). Nothing reports it again. Package reactor calls it, with the
	// owner held.
	Reported func(b *B)
}

// link is what Set recorded.
var link any

// Set records f. Package event calls it once, from its init.
func Set[B, E, F any](f *Funcs[B, E, F]) { link = f }

// Get returns the Funcs that Set recorded. eventkind imports event, so
// event's init has run before any of eventkind's code.
func Get[B, E, F any]() *Funcs[B, E, F] { return link.(*Funcs[B, E, F]) }
