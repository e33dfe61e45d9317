package reactor_test

import (
	"syscall"
	"testing"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
)

// Every exported function and method of the package, called with nil and
// zero input (zero values, nil arguments), refuses with a
// clear error and never panics.
func TestNilInputsRefused(t *testing.T) {
	conform.CheckNilInputs(t, conform.NilInputs{
		Dir:   ".",
		Funcs: map[string]any{"New": reactor.New, "Go": reactor.Go[int], "Spawn": reactor.Spawn[int]},
		Types: []any{
			(*reactor.Coroutine[int])(nil), (*reactor.DeadlockError)(nil), (*reactor.Driver)(nil),
			(*reactor.Reactor)(nil), (*reactor.Timer)(nil), (*reactor.BlockedError)(nil),
		},
		Refusals: []error{event.ErrNilEvent, reactor.ErrZeroReactor, syscall.EINVAL},
		MaySucceed: map[string]string{
			"New":                       "the zero Options are the defaults",
			"zero Coroutine.Outcome":    "no outcome yet: ok is false, and no error",
			"zero DeadlockError.Unwrap": "it unwraps to event.ErrDeadlock",
		},
	})
}

// Spawn and Go on a live reactor with a nil context and a nil function
// refuse, never panic, on both drivers.
func TestNilArgumentsOnLiveReactor(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		r, err := reactor.New(reactor.Options{Driver: d})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		conform.CheckNilArgs(t, r, map[string]any{"Go": reactor.Go[int], "Spawn": reactor.Spawn[int]}, nil)
	})
}
