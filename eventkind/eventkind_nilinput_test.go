package eventkind_test

import (
	"testing"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/eventkind"
	"github.com/uvevent/uvevent/internal/conform"
)

// Every exported function of the package, called with nil and zero input,
// refuses with a clear error and never panics.
func TestNilInputsRefused(t *testing.T) {
	conform.CheckNilInputs(t, conform.NilInputs{
		Dir: ".",
		Funcs: map[string]any{
			"AttachFD": eventkind.AttachFD, "Complete": eventkind.Complete, "Init": eventkind.Init,
			"KindBit": eventkind.KindBit, "LoopRefs": eventkind.LoopRefs, "Notify": eventkind.Notify,
			"SetKindBit": eventkind.SetKindBit, "ActiveDelta": eventkind.ActiveDelta, "Report": eventkind.Report,
			"Subscribers": eventkind.Subscribers, "Callbacks": eventkind.Callbacks,
		},
		Refusals: []error{event.ErrNilEvent},
		MaySucceed: map[string]string{
			"KindBit":    "a nil Base keeps no bit: false",
			"SetKindBit": "a nil Base is left alone",
			"Callbacks":  "a nil Base holds no callback: 0",
		},
	})
}
