package async_test

import (
	"errors"
	"syscall"
	"testing"

	"github.com/uvevent/uvevent/async"
	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
)

// Every exported function and method of the package, called with nil and
// zero input (zero values, nil arguments), refuses with a
// clear error and never panics.
func TestNilInputsRefused(t *testing.T) {
	conform.CheckNilInputs(t, conform.NilInputs{
		Dir: ".",
		Funcs: map[string]any{
			"Go":            async.Go[int],
			"Spawn":         async.Spawn[int],
			"NewChannel":    async.NewChannel[int],
			"NewGroup":      async.NewGroup[int],
			"NewPool":       async.NewPool[int],
			"NewScope":      async.NewScope,
			"NewSuspension": async.NewSuspension[int],
			"NewTimeout":    async.NewTimeout,
		},
		Types: []any{
			(*async.Channel[int])(nil), (*async.Group[int])(nil), (*async.Op[int])(nil),
			(*async.Pool[int])(nil), (*async.Scope)(nil), (*async.Suspension[int])(nil),
			(*async.Timeout)(nil),
		},
		Refusals: []error{event.ErrNilEvent, syscall.EINVAL, reactor.ErrZeroReactor},
		MaySucceed: map[string]string{
			"zero Op.Outcome": "no outcome yet: ok is false, and no error",
		},
	})
}

// The zero values of the package's types refuse with event.ErrNilEvent, as
// the I/O kinds' zero values do, with a live context too: none panics, and
// no wait returns nil as if it were done.
func TestZeroValuesRefused(t *testing.T) {
	ctx := testCtx(t)
	for name, call := range map[string]func() error{
		"Group.Wait":        func() error { _, err := (&async.Group[int]{}).Wait(ctx); return err },
		"Group.WaitN":       func() error { _, err := (&async.Group[int]{}).WaitN(ctx, 1); return err },
		"Group.WaitAny":     func() error { _, _, err := (&async.Group[int]{}).WaitAny(ctx); return err },
		"Scope.Wait":        func() error { return (&async.Scope{}).Wait(ctx) },
		"Scope.Close":       func() error { return (&async.Scope{}).Close(ctx) },
		"Channel.Recv":      func() error { _, err := (&async.Channel[int]{}).Recv().Await(ctx); return err },
		"Channel.Send":      func() error { _, err := (&async.Channel[int]{}).Send(1).Await(ctx); return err },
		"Channel.Close":     func() error { return (&async.Channel[int]{}).Close() },
		"Pool.Acquire":      func() error { _, err := (&async.Pool[int]{}).Acquire().Await(ctx); return err },
		"Pool.Release":      func() error { return (&async.Pool[int]{}).Release(1) },
		"Suspension.Wait":   func() error { _, err := (&async.Suspension[int]{}).Suspend(ctx); return err },
		"Suspension.Resume": func() error { return (&async.Suspension[int]{}).Resume(1) },
		"Timeout.Start":     func() error { return (&async.Timeout{}).Start() },
		"Timeout.Await":     func() error { _, err := event.Await(ctx, event.Any(), &async.Timeout{}); return err },
	} {
		if err := call(); !errors.Is(err, event.ErrNilEvent) {
			t.Errorf("zero %s = %v, want ErrNilEvent", name, err)
		}
	}
}

// The constructors on a live reactor with nil and zero other arguments
// refuse or make something usable: never a panic, never a nil result
// without an error.
func TestNilArgumentsOnLiveReactor(t *testing.T) {
	r, _ := newReactor(t)
	conform.CheckNilArgs(t, r, map[string]any{
		"Go": async.Go[int], "Spawn": async.Spawn[int], "NewChannel": async.NewChannel[int],
		"NewGroup": async.NewGroup[int], "NewPool": async.NewPool[int], "NewScope": async.NewScope,
		"NewSuspension": async.NewSuspension[int], "NewTimeout": async.NewTimeout,
	}, nil)
}
