//go:build gc && !race

package reactor

import (
	"sync/atomic"
	"unsafe"
)

// A signal passes the baton to one goroutine (and a Call's completion back
// to its caller): put leaves a value and wakes the goroutine parked in
// take, if one is. At most one value is ever outstanding (the baton is
// one, a Call completes once): a second put before the take is a bug of
// the caller, and panics. It does what a channel of capacity one does for
// the baton, with the runtime's own park and wake (gopark, goready) and one
// atomic word instead of the channel's lock, its queue of waiters and its
// sudog: the baton's hop between two coroutines then costs about what a
// hop of a channel ping-pong between two goroutines does, where the
// channel of its own made it dearer (docs/benchmarks.md, K1). The race
// detector's build uses a channel instead (signal_race.go): its atomics
// cannot run on the scheduler's stack, where gopark calls commit. So does
// a compiler other than gc, which has no such runtime functions.
type signal struct {
	// state: sigEmpty, sigTrue or sigFalse (a value put, not yet taken),
	// or the runtime's descriptor of the goroutine parked in take.
	state atomic.Uintptr
}

const (
	sigEmpty uintptr = iota
	sigTrue
	sigFalse
)

func (s *signal) init() {}

// put leaves v for take, waking the goroutine parked there.
func (s *signal) put(v bool) {
	w := sigTrue
	if !v {
		w = sigFalse
	}
	for {
		switch old := s.state.Load(); old {
		case sigEmpty:
			if s.state.CompareAndSwap(sigEmpty, w) {
				return
			}
		case sigTrue, sigFalse:
			panic("reactor: the baton given twice")
		default: // a parked goroutine: the put that swaps it out wakes it
			// A swap, not a store: two puts racing here (a broken baton)
			// would both ready it, and the runtime throws on the second
			// (no recover catches that); the loser finds the value and
			// panics instead. It costs what a store does (a locked
			// instruction either way).
			if s.state.CompareAndSwap(old, w) {
				goready(old, 0)
				return
			}
		}
	}
}

// take returns the value put, parking until there is one. One goroutine
// at a time takes: a second one, which finds the first's descriptor where
// a value would be, panics and leaves the first parked for the put.
func (s *signal) take() bool {
	if s.state.Load() == sigEmpty {
		// The goroutine's descriptor goes into state once it is parked
		// (commit runs then): a put that comes first makes commit fail,
		// and gopark returns at once.
		gopark(commit, unsafe.Pointer(s), waitReasonZero, traceBlockGeneric, 1)
	}
	v := s.state.Load() // after the put's store: what it left
	if v != sigTrue && v != sigFalse {
		panic("reactor: the baton taken by two goroutines at once")
	}
	s.state.Store(sigEmpty)
	return v == sigTrue
}

// commit runs on the scheduler's stack once the goroutine gp is parked:
// it publishes gp to put, unless a value came first (the park is then
// undone).
//
//go:nosplit
func commit(gp uintptr, s unsafe.Pointer) bool {
	return atomic.CompareAndSwapUintptr((*uintptr)(s), sigEmpty, gp)
}

// The runtime's park and wake, which it keeps for packages outside it
// (go.dev/issue/67401: "Do not remove or change the type signature").
// Their reason and trace arguments are the runtime's uint8 enums; zero is
// the generic one of each.
const (
	waitReasonZero    uint8 = 0
	traceBlockGeneric uint8 = 0
)

//go:linkname gopark runtime.gopark
func gopark(unlockf func(gp uintptr, lock unsafe.Pointer) bool, lock unsafe.Pointer, reason uint8, traceReason uint8, traceskip int)

//go:linkname goready runtime.goready
func goready(gp uintptr, traceskip int)
