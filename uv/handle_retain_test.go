package uv_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/uvevent/uvevent/uv"
)

// A reference dropped without Close is freed after a collection and a loop
// turn, whatever its count says (docs/architecture.md §5: forgetting Close never leaks a
// handle past a GC cycle plus one loop iteration; closeDropped closes
// "whatever its count says"). With a Retain outstanding, the first Dispose
// stops the cleanup, so the dropped reference is never seen and its libuv
// handle lives until the reactor closes.
func TestDroppedAfterRetainAndDisposeIsFreed(t *testing.T) {
	u := uv.UvtNewReactor(t)
	func() {
		tr, err := uv.NewTrigger(u.Reactor)
		if err != nil {
			t.Fatal(err)
		}
		tr.Retain()
		tr.Dispose() // one of the two references given back; the other is forgotten
	}()
	deadline := time.Now().Add(3 * time.Second) // safety bound, not a timing
	for u.Stats().Handles["trigger"] != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("a dropped trigger is still alive after many collections and turns: %v", u.Stats().Handles)
		}
		runtime.GC()
		u.RunNoWait(t.Context())
		runtime.Gosched()
	}
}
