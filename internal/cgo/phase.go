package uvcgo

/*
#include "phase.h"
*/
import "C"

var phaseOps = map[Phase]string{PhasePrepare: "uv_prepare", PhaseCheck: "uv_check", PhaseIdle: "uv_idle"}

// NewPhase creates a prepare, check or idle handle reporting
// CompletionPhase records for id each time it runs.
func (l *Loop) NewPhase(p Phase, id uint64) (Handle, error) {
	var h C.uintptr_t
	if rc := C.uvev_phase_new(l.mut(), C.int(p), C.uint64_t(id), &h); rc != 0 {
		return 0, errorOf(phaseOps[p]+"_init", int(rc))
	}
	return Handle(h), nil
}

// StartPhase starts a phase hook.
func (l *Loop) StartPhase(p Phase, h Handle) error {
	l.mut()
	return errorOf(phaseOps[p]+"_start", int(C.uvev_phase_start(C.uintptr_t(h))))
}

// StopPhase stops a phase hook.
func (l *Loop) StopPhase(p Phase, h Handle) error {
	l.mut()
	return errorOf(phaseOps[p]+"_stop", int(C.uvev_phase_stop(C.uintptr_t(h))))
}
