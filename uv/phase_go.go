package uv

import (
	"fmt"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/eventkind"
	uvcgo "github.com/uvevent/uvevent/internal/cgo"
	"github.com/uvevent/uvevent/internal/kind"
	"github.com/uvevent/uvevent/reactor"
)

// This file is a Phase on the pure-Go driver: a Go-owned event whose Start
// adds a hook to the reactor's iterations (kind.Host.AddTurnHook), in
// libuv's order (idle, prepare, check), all three after the iteration's
// timers and I/O and before the loop waits.

// goPhase is a Phase's event on the pure-Go driver; loop-owned.
type goPhase struct {
	event.Base
	keeper
	r      *reactor.Reactor
	which  uvcgo.Phase
	runs   uint64
	remove func() // the hook, while started
	closer reactorCloser
}

type goPhaseOps goPhase

// newGoPhase makes a Phase on the pure-Go driver. As a libuv handle is, it
// counts in Stats().Handles from now until it closes, and the reactor's
// Close closes it, started or not.
func newGoPhase(r *reactor.Reactor, which uvcgo.Phase) (*Phase, error) {
	if err := checkReactor("New"+phaseNames[which], r); err != nil {
		return nil, err
	}
	e := &goPhase{r: r, which: which}
	eventkind.Init(&e.Base, (*goPhaseOps)(e), true, event.GoOwned)
	var err error
	if x := r.Call(func() {
		if err = onReactorClose(&e.closer, r, e); err == nil {
			kind.HostOf(r.Owner()).CountHandle(e.kindName(), 1)
		}
	}); x != nil {
		err = x
	}
	if err != nil {
		return nil, err
	}
	p := &Phase{}
	trackGo(p, &p.handle, r, e)
	return p, nil
}

func (e *goPhase) kindName() string { return "phase" }

func (e *goPhase) fire() {
	e.runs++
	eventkind.Notify(&e.Base, nil, nil)
}

func (o *goPhaseOps) Owner() event.Owner { return o.r.Owner() }
func (o *goPhaseOps) Event() event.Event { return (*goPhase)(o) }

func (o *goPhaseOps) Describe() string {
	return fmt.Sprintf("%s(runs=%d)", phaseNames[o.which], o.runs)
}

func (o *goPhaseOps) Arm() error {
	if err := o.collected(); err != nil {
		return err
	}
	if err := onReactorClose(&o.closer, o.r, (*goPhase)(o)); err != nil {
		return err
	}
	o.remove = kind.HostOf(o.r.Owner()).AddTurnHook(o.which, (*goPhase)(o).fire)
	o.holdRef()
	return nil
}

func (o *goPhaseOps) Disarm() {
	if o.remove != nil {
		o.remove()
		o.remove = nil
	}
	o.dropRef()
}

func (o *goPhaseOps) Free(bool) {
	o.dropRef()
	o.closer.forget()
	kind.HostOf(o.r.Owner()).CountHandle((*goPhase)(o).kindName(), -1)
}
