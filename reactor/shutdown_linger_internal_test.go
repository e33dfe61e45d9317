package reactor

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/uvevent/uvevent/internal/kind"
)

// newOnEachDriver runs fn with a fresh reactor on each driver (libuv
// skipped, saying so, in a build without cgo).
func newOnEachDriver(t *testing.T, fn func(t *testing.T, r *Reactor)) {
	for _, d := range []Driver{DriverLibuv, DriverGo} {
		t.Run(d.String(), func(t *testing.T) {
			r, err := New(Options{Driver: d})
			if errors.Is(err, ErrNoLibuv) {
				t.Skipf("%v: not in this build", err)
			}
			if err != nil {
				t.Fatal(err)
			}
			fn(t, r)
		})
	}
}

// Work that lingers (kind.Host.Linger) holds the reactor's Close until it
// is over; Shutdown with a context that ends first returns an error
// matching ErrCloseIncomplete and the context's, naming the work, with
// the reactor closed; a later Close waits for the rest; a Linger after
// that does nothing, and work already over is not waited for.
func TestShutdownWaitsForLingeringWork(t *testing.T) {
	newOnEachDriver(t, func(t *testing.T, r *Reactor) {
		over := make(chan struct{})
		close(over)
		kind.HostOf(r.Owner()).Linger(named("work over already"), over)
		blocker := make(chan struct{})
		var ended atomic.Bool
		kind.HostOf(r.Owner()).Linger(named("the blocker"), blocker)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		err := r.Shutdown(ctx)
		if !errors.Is(err, ErrCloseIncomplete) || !errors.Is(err, context.Canceled) {
			t.Fatalf("Shutdown = %v, want ErrCloseIncomplete and context.Canceled", err)
		}
		if msg := err.Error(); !strings.Contains(msg, "the blocker") || strings.Contains(msg, "work over already") {
			t.Errorf("Shutdown = %q, want it to name the blocker only", msg)
		}
		if _, err := r.NewTimer(0, 0); !errors.Is(err, ErrReactorClosed) {
			t.Errorf("NewTimer after the Shutdown = %v, want ErrReactorClosed", err)
		}
		go func() {
			ended.Store(true)
			close(blocker)
		}()
		if err := r.Close(); err != nil {
			t.Errorf("Close = %v, want nil", err)
		}
		if !ended.Load() {
			t.Error("Close returned before the lingering work was over")
		}
		kind.HostOf(r.Owner()).Linger(named("after Close"), make(chan struct{})) // never over: not waited for
		if err := r.Close(); err != nil {
			t.Errorf("Close again = %v, want nil", err)
		}
	})
}

// With a context that cannot end (Close), the wait happens on the calling
// goroutine, and Close returns once the work is over.
func TestCloseWaitsForLingeringWork(t *testing.T) {
	newOnEachDriver(t, func(t *testing.T, r *Reactor) {
		blocker := make(chan struct{})
		var ended atomic.Bool
		kind.HostOf(r.Owner()).Linger(named("the blocker"), blocker)
		go func() {
			ended.Store(true)
			close(blocker)
		}()
		if err := r.Close(); err != nil {
			t.Errorf("Close = %v, want nil", err)
		}
		if !ended.Load() {
			t.Error("Close returned before the lingering work was over")
		}
	})
}

// named is a lingering work's name that does not change.
func named(s string) func() string { return func() string { return s } }
