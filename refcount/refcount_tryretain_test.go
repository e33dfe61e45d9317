package refcount

import "testing"

// TryRetain retains a live count and refuses, without a panic and without
// changing it, one already released.
func TestTryRetain(t *testing.T) {
	var c Count
	if !c.TryRetain() {
		t.Fatal("TryRetain on a live count refused")
	}
	if got := c.Load(); got != 2 {
		t.Fatalf("Load() after TryRetain = %d, want 2", got)
	}
	c.Release()
	if !c.Release() {
		t.Fatal("the second Release was not the last")
	}
	if c.TryRetain() {
		t.Fatal("TryRetain on a released count succeeded")
	}
	if last, ok := c.TryRelease(); last || ok {
		t.Fatalf("TryRelease after a refused TryRetain = %v, %v: the count changed", last, ok)
	}
}
