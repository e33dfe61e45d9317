package loop_test

import (
	"syscall"
	"testing"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/loop"
	"github.com/uvevent/uvevent/reactor"
)

// Every exported function and method of the package, called with nil and
// zero input (zero values, nil arguments), refuses with a
// clear error and never panics.
func TestNilInputsRefused(t *testing.T) {
	conform.CheckNilInputs(t, conform.NilInputs{
		Dir:      ".",
		Funcs:    map[string]any{"New": loop.New},
		Types:    []any{(*loop.Loop)(nil), (*loop.Stream)(nil), (*loop.DelayID)(nil), (*loop.RepeatID)(nil)},
		Refusals: []error{event.ErrNilEvent, reactor.ErrZeroReactor, syscall.EINVAL},
		MaySucceed: map[string]string{
			"New": "the zero Options are the defaults",
		},
	})
}
