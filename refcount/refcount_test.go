package refcount

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
)

func TestZeroValueHoldsOneReference(t *testing.T) {
	var c Count
	if got := c.Load(); got != 1 {
		t.Fatalf("Load() = %d, want 1", got)
	}
	if !c.Release() {
		t.Fatal("releasing the only reference did not report the last release")
	}
	if got := c.Load(); got != 0 {
		t.Fatalf("Load() after last release = %d, want 0", got)
	}
}

func TestRetainReleaseOrder(t *testing.T) {
	var c Count
	c.Retain()
	c.Retain()
	for i, want := range []bool{false, false, true} {
		if got := c.Release(); got != want {
			t.Fatalf("release %d reported last=%v, want %v", i, got, want)
		}
	}
}

func mustPanicMisuse(t *testing.T, f func()) {
	t.Helper()
	defer func() {
		r := recover()
		err, ok := r.(error)
		if !ok || !errors.Is(err, ErrMisuse) {
			t.Fatalf("recovered %v, want an error wrapping ErrMisuse", r)
		}
	}()
	f()
}

func TestUseAfterLastReleasePanics(t *testing.T) {
	var c Count
	c.Release()
	mustPanicMisuse(t, c.Retain)
	var d Count
	d.Release()
	mustPanicMisuse(t, func() { d.Release() })
}

// Many goroutines retain and release concurrently; exactly one sees the end.
func TestExactlyOnceUnderConcurrency(t *testing.T) {
	for range 50 {
		var c Count
		const n = 64
		for range n {
			c.Retain()
		}
		var last atomic.Int32
		var wg sync.WaitGroup
		for range n + 1 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if c.Release() {
					last.Add(1)
				}
			}()
		}
		wg.Wait()
		if got := last.Load(); got != 1 {
			t.Fatalf("%d releases reported last, want exactly 1", got)
		}
	}
}

// TryRelease from many goroutines: exactly one reports last, the rest
// either drop a reference or find the count released, never a panic.
func TestTryReleaseRace(t *testing.T) {
	for range 200 {
		var c Count
		for range 3 {
			c.Retain()
		}
		var lasts atomic.Int32
		var wg sync.WaitGroup
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if last, _ := c.TryRelease(); last {
					lasts.Add(1)
				}
			}()
		}
		wg.Wait()
		if lasts.Load() != 1 {
			t.Fatalf("%d calls reported the last release, want 1", lasts.Load())
		}
	}
}
