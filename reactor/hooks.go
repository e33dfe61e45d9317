package reactor

import (
	"slices"

	uvcgo "github.com/uvevent/uvevent/internal/cgo"
)

// turnHooks are the pure-Go driver's phase hooks (kind.Host.AddTurnHook),
// by phase; loop-owned.
type turnHooks struct {
	by      [3][]*turnHook // PhasePrepare, PhaseCheck, PhaseIdle, less one
	scratch []*turnHook
}

type turnHook struct {
	fn      func()
	removed bool
}

func (h *turnHooks) add(which uvcgo.Phase, fn func()) (remove func()) {
	k := &turnHook{fn: fn}
	i := int(which) - int(uvcgo.PhasePrepare)
	h.by[i] = append(h.by[i], k)
	return func() {
		if !k.removed {
			k.removed = true
			h.by[i] = slices.DeleteFunc(h.by[i], func(x *turnHook) bool { return x == k })
		}
	}
}

// run runs the hooks of a phase that are there when it starts and not
// removed by an earlier one; it returns how many ran.
func (h *turnHooks) run(which uvcgo.Phase) uint64 {
	hs := h.by[int(which)-int(uvcgo.PhasePrepare)]
	if len(hs) == 0 {
		return 0
	}
	h.scratch = append(h.scratch[:0], hs...)
	n := uint64(0)
	for i, k := range h.scratch {
		h.scratch[i] = nil
		if !k.removed {
			n++
			k.fn()
		}
	}
	return n
}

// spinning reports whether an idle hook keeps the loop from blocking.
func (h *turnHooks) spinning() bool {
	return len(h.by[int(uvcgo.PhaseIdle)-int(uvcgo.PhasePrepare)]) > 0
}
