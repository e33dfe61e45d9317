package event_test

import (
	"errors"
	"testing"

	"github.com/uvevent/uvevent/event"
)

// nilSource names no owner.
type nilSource struct{}

func (nilSource) Owner() event.Owner { return nil }

// A nil OwnerSource, a typed nil one, and one that names no owner make a
// future that refuses every operation with ErrNoOwner, never a panic.
func TestNewFutureRefusesSourceWithoutOwner(t *testing.T) {
	for _, tc := range []struct {
		name string
		src  event.OwnerSource
	}{
		{"nil", nil},
		{"nil *Serial", (*event.Serial)(nil)},
		{"Owner() nil", nilSource{}},
	} {
		f := event.NewFuture[int](tc.src)
		if err := f.Resolve(1); !errors.Is(err, event.ErrNoOwner) {
			t.Errorf("%s: Resolve = %v, want ErrNoOwner", tc.name, err)
		}
	}
}

// A Serial is its own OwnerSource; a nil one names no owner.
func TestSerialIsItsOwnSource(t *testing.T) {
	var s event.Serial
	if got := s.Owner(); got != event.Owner(&s) {
		t.Errorf("Serial.Owner = %v, want the Serial", got)
	}
	if got := (*event.Serial)(nil).Owner(); got != nil {
		t.Errorf("nil Serial.Owner = %v, want nil", got)
	}
}
