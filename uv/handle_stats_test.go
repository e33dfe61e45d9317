package uv_test

import (
	"testing"

	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// The reactor exposes a counter of cgo crossings in its stats.
// Creating and closing a libuv handle crosses into the shim, so the count
// cannot stay zero.
func TestStatsCountCrossings(t *testing.T) {
	uv.UvtNeedsLibuv(t)
	r := uv.UvtNewReactorOn(t, reactor.DriverLibuv).Reactor
	defer r.Close()
	tr, err := uv.NewTrigger(r)
	if err != nil {
		t.Fatal(err)
	}
	tr.Close()
	if got := r.Stats().Crossings; got == 0 {
		t.Fatalf("Stats().Crossings = 0 after a handle was created and closed through the shim")
	}
}
