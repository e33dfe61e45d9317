package uv

import (
	uvcgo "github.com/uvevent/uvevent/internal/cgo"
	"github.com/uvevent/uvevent/reactor"
)

// A Phase is a loop-phase hook, libuv's prepare, check and idle handles as
// events (code ported from libuv, luv or uvw uses them):
//
//   - a Prepare notifies once per loop iteration, before libuv polls for I/O;
//   - a Check notifies once per loop iteration, after libuv polled;
//   - an Idle notifies once per loop iteration and keeps the loop from
//     blocking while it is started: the loop spins, so stop it when done.
//
// While a started hook exists, every loop iteration turns libuv (which runs
// the hooks), so a started Prepare or Check costs one cgo call per
// iteration. A started hook is an active event: it keeps Run going.
//
// On the pure-Go driver (phase_go.go) the hooks run in the same order, once
// per iteration, after the iteration's timers and I/O and before the loop
// waits: idle, prepare, then check at once. So a Check follows the I/O of
// its iteration, as on libuv, but no wait for I/O comes between a Prepare
// and the Check after it (prepare-to-check time is not the time spent
// polling there).
//
// A Phase is an event reference (see Lifetime in the package doc).
type Phase struct {
	handle
}

var phaseNames = map[uvcgo.Phase]string{uvcgo.PhasePrepare: "Prepare", uvcgo.PhaseCheck: "Check", uvcgo.PhaseIdle: "Idle"}

// NewPrepare creates a prepare hook on r, not started.
func NewPrepare(r *reactor.Reactor) (*Phase, error) { return newPhase(r, uvcgo.PhasePrepare) }

// NewCheck creates a check hook on r, not started.
func NewCheck(r *reactor.Reactor) (*Phase, error) { return newPhase(r, uvcgo.PhaseCheck) }

// NewIdle creates an idle hook on r, not started.
func NewIdle(r *reactor.Reactor) (*Phase, error) { return newPhase(r, uvcgo.PhaseIdle) }

func newPhase(r *reactor.Reactor, which uvcgo.Phase) (*Phase, error) {
	if r != nil && r.Driver() == reactor.DriverGo {
		return newGoPhase(r, which)
	}
	e := &phaseEvent{which: which}
	if err := newCore(r, &e.core, e, 0, func(l *uvcgo.Loop, id uint64) (uvcgo.Handle, error) {
		return l.NewPhase(which, id)
	}); err != nil {
		return nil, err
	}
	p := &Phase{}
	track(p, &p.handle, &e.core)
	return p, nil
}
