package uv_test

import (
	"errors"
	"testing"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/uv"
)

// event.Deref of an event reference that stands for no event (a nil
// pointer of a reference kind, or its zero value, held in an event.Event)
// gives an event whose methods refuse with ErrNilEvent, as the reference's
// own do: never a nil interface whose first method call panics.
func TestDerefOfZeroReferenceRefuses(t *testing.T) {
	for name, ev := range map[string]event.Event{
		"nil Handle": (*uv.Handle)(nil), "zero Handle": &uv.Handle{},
		"nil FSEvent": (*uv.FSEvent)(nil), "zero FSEvent": &uv.FSEvent{},
		"nil IO": (*uv.IO)(nil), "zero IO": &uv.IO{},
		"nil Listener": (*uv.Listener)(nil), "zero Listener": &uv.Listener{},
		"nil Phase": (*uv.Phase)(nil), "zero Phase": &uv.Phase{},
		"nil Poll": (*uv.Poll)(nil), "zero Poll": &uv.Poll{},
		"nil Trigger": (*uv.Trigger)(nil), "zero Trigger": &uv.Trigger{},
		"nil UDP": (*uv.UDP)(nil), "zero UDP": &uv.UDP{},
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
