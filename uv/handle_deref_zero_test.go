package uv_test

import (
	"errors"
	"testing"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/uv"
)

// event.Deref of an event reference that stands for no event (a zero value
// of a reference kind, held in an event.Event) gives an event whose methods
// refuse with ErrNilEvent, as the reference's own do: never a nil interface
// whose first method call panics.
func TestDerefOfZeroReferenceRefuses(t *testing.T) {
	for name, ev := range map[string]event.Event{
		"zero FSEvent": &uv.FSEvent{}, "zero IO": &uv.IO{}, "zero Listener": &uv.Listener{},
		"zero Phase": &uv.Phase{}, "zero Poll": &uv.Poll{}, "zero Trigger": &uv.Trigger{},
		"zero UDP": &uv.UDP{},
	} {
		var start, closeErr error
		if err := callBounded(func() {
			d := event.Deref(ev)
			_ = d.Info()
			_ = d.Flags()
			start = d.Start()
			closeErr = d.Close()
			d.Dispose()
		}); err != nil {
			t.Errorf("%s: methods of event.Deref's result: %v", name, err)
			continue
		}
		if !errors.Is(start, event.ErrNilEvent) {
			t.Errorf("%s: event.Deref(ev).Start() = %v, want ErrNilEvent", name, start)
		}
		if closeErr != nil && !errors.Is(closeErr, event.ErrNilEvent) {
			t.Errorf("%s: event.Deref(ev).Close() = %v, want nil or ErrNilEvent", name, closeErr)
		}
	}
}
