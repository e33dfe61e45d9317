package event_test

import (
	"syscall"
	"testing"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/conform"
)

// Every exported function and method of the package, called with nil and
// zero input (zero values, nil arguments), refuses with a
// clear error and never panics.
func TestNilInputsRefused(t *testing.T) {
	conform.CheckNilInputs(t, conform.NilInputs{
		Dir: ".",
		Funcs: map[string]any{
			"All": event.All, "Any": event.Any, "AtLeast": event.AtLeast, "FirstSuccess": event.FirstSuccess,
			"Await": event.Await, "AwaitAll": event.AwaitAll[int, event.Typed[int]], "AwaitAllSettled": event.AwaitAllSettled[int, event.Typed[int]],
			"AwaitFirst": event.AwaitFirst[int, event.Typed[int]], "On": event.On[int], "AwaitValue": event.AwaitValue[int],
			"Deref": event.Deref, "KindOf": event.KindOf,
			"LogReport": event.LogReport, "NewCallback": event.NewCallback,
			"NewFuture": event.NewFuture[int], "NewHandoff": event.NewHandoff[int], "OwnerOf": event.OwnerOf, "StateOf": event.StateOf,
			"Subscribe": event.Subscribe, "ValueOf": event.ValueOf[int],
			"Winner": event.Winner,
		},
		Types: []any{
			(*event.Base)(nil), (*event.Callback)(nil), (*event.Flags)(nil), (*event.Future[int])(nil), (*event.Handoff[int])(nil),
			(*event.Mode)(nil), (*event.PanicError)(nil), (*event.Serial)(nil), (*event.State)(nil),
			(*event.TimeoutError)(nil), (*event.UnhandledError)(nil),
		},
		Refusals: []error{event.ErrNilEvent, event.ErrNilCallback, event.ErrNoOwner, syscall.EINVAL},
		MaySucceed: map[string]string{
			"ValueOf":                    "the zero Outcome holds T's zero value and no error",
			"zero Future.Outcome":        "no outcome yet: ok is false, and no error",
			"zero Handoff.Outcome":       "no outcome kept: ok is false, and no error",
			"zero PanicError.Unwrap":     "it unwraps to the panic value when that is an error",
			"zero UnhandledError.Unwrap": "it unwraps to Err, nil in the zero value",
		},
	})
}
