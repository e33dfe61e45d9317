package uv

// The libuv driver's phases: uv_prepare_t, uv_check_t and uv_idle_t
// (internal/cgo/phase.c).

import (
	"fmt"

	"github.com/uvevent/uvevent/eventkind"
	uvcgo "github.com/uvevent/uvevent/internal/cgo"
)

type phaseEvent struct {
	core
	which uvcgo.Phase
	runs  uint64
}

func (e *phaseEvent) kindName() string { return "phase" }
func (e *phaseEvent) closing()         {}

func (e *phaseEvent) arm() error {
	if err := e.loop.StartPhase(e.which, e.h); err != nil {
		return err
	}
	e.host.EveryTurn(1)
	return nil
}

func (e *phaseEvent) disarm() {
	e.host.EveryTurn(-1)
	e.loop.StopPhase(e.which, e.h)
}

func (e *phaseEvent) completed(*uvcgo.Completion) {
	e.runs++
	eventkind.Notify(&e.Base, nil, nil)
}

func (e *phaseEvent) describe() string {
	return fmt.Sprintf("%s(runs=%d)", phaseNames[e.which], e.runs)
}
