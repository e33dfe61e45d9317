package uv_test

import (
	"testing"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/uv"
)

// Closing an event the reactor's Close already closed is a double close,
// which does nothing and returns nil. The usual `defer tr.Close()` after
// `defer r.Close()` must not see an error, and StateOf must say closed.
func TestCloseAfterReactorCloseIsANoOp(t *testing.T) {
	r := uv.UvtNewReactor(t).Reactor
	tr, err := uv.NewTrigger(r)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if got := event.StateOf(tr); got != event.StateClosed {
		t.Errorf("StateOf after the reactor's Close = %v, want closed", got)
	}
	if err := tr.Close(); err != nil {
		t.Errorf("Close of an event its reactor closed = %v, want nil (double close is a no-op)", err)
	}
}
