package uv_test

import (
	"errors"
	"testing"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/uv"
)

// NewPollProxy over a zero Poll (one no constructor made) refuses it with
// an error matching event.ErrNilEvent, as the zero Poll's own methods do,
// instead of dereferencing its missing state.
func TestNewPollProxyRefusesZeroPoll(t *testing.T) {
	x, err := uv.NewPollProxy(new(uv.Poll), uv.Readable)
	if x != nil || !errors.Is(err, event.ErrNilEvent) {
		t.Errorf("NewPollProxy(zero Poll) = %v, %v; want nil and an error matching ErrNilEvent", x, err)
	}
}
