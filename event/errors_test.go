package event_test

import (
	"context"
	"errors"
	"strings"
	"syscall"
	"testing"

	"github.com/uvevent/uvevent/event"
)

// Every refusal of package event matches a sentinel with errors.Is.
func TestRefusalsMatchSentinels(t *testing.T) {
	own := &event.Serial{}
	f := event.NewFuture[int](own)
	ctx := context.Background()
	awaitErr := func(m event.Mode, evs ...event.Event) error { _, err := event.Await(ctx, m, evs...); return err }
	for _, c := range []struct {
		name string
		err  error
		want []error
	}{
		{"Reject(nil)", f.Reject(nil), []error{event.ErrNilError, syscall.EINVAL}},
		{"AtLeast(0)", awaitErr(event.AtLeast(0), f), []error{event.ErrBadMode, syscall.EINVAL}},
		{"AtLeast(2) of one", awaitErr(event.AtLeast(2), f), []error{event.ErrBadMode, syscall.EINVAL}},
		{"Within(-1)", awaitErr(event.Any().Within(-1), f), []error{event.ErrBadMode, syscall.EINVAL}},
		{"no events", awaitErr(event.Any()), []error{event.ErrBadMode, syscall.EINVAL}},
		{"nil context", func() error { var nilCtx context.Context; _, err := event.Await(nilCtx, event.Any(), f); return err }(), []error{event.ErrNilContext, syscall.EINVAL}},
	} {
		for _, w := range c.want {
			if !errors.Is(c.err, w) {
				t.Errorf("%s = %v, want an error matching %v", c.name, c.err, w)
			}
		}
	}
	if err := f.Reject(nil); err == nil || !strings.Contains(err.Error(), "Reject") {
		t.Errorf("Reject(nil) = %v, want its text to name Reject", err)
	}
}
