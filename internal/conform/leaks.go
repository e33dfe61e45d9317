package conform

import (
	"errors"
	"testing"
	"time"

	"github.com/uvevent/uvevent/reactor"
)

// Available reports whether this build has driver d: the libuv driver is
// missing from a build without cgo (reactor.New refuses it with
// reactor.ErrNoLibuv); the pure-Go driver and DriverAuto are always there.
func Available(d reactor.Driver) bool {
	r, err := reactor.New(reactor.Options{Driver: d})
	if err != nil {
		return !errors.Is(err, reactor.ErrNoLibuv)
	}
	r.Close()
	return true
}

// NoneLeft checks that a closed reactor holds nothing alive: no C handle,
// no handle of any kind in its stats, no timer, no coroutine. (Stats.Active
// is not among them: a Hold the program still had at Close stays counted
// there; Close does not wait for it, and it holds nothing of the reactor's.) It is what "nothing left" means for every test reactor: each
// helper that makes one for a test calls it at cleanup, after Close, as
// net's TestMain reports the sockets a test leaked.
func NoneLeft(t testing.TB, r *reactor.Reactor) {
	t.Helper()
	s := r.Stats()
	// A coroutine blocked outside Await when the reactor closed ends on its
	// own goroutine once its canceled context reaches it: wait for that;
	// the bound only turns a coroutine that never ends into a failure.
	for deadline := time.Now().Add(safety); s.Coroutines != 0 && time.Now().Before(deadline); s = r.Stats() {
		time.Sleep(time.Millisecond)
	}
	if s.CHandles != 0 || len(s.Handles) != 0 || s.Timers != 0 || s.Coroutines != 0 {
		t.Errorf("left alive after Close: CHandles=%d Handles=%v Timers=%d Coroutines=%d, want none",
			s.CHandles, s.Handles, s.Timers, s.Coroutines)
	}
}

// NewReactor returns a reactor made with o for a test. At cleanup it is
// closed (Close must succeed; closing a reactor the test closed already is
// a no-op) and checked to hold nothing (NoneLeft).
func NewReactor(t testing.TB, o reactor.Options) *reactor.Reactor {
	t.Helper()
	r, err := reactor.New(o)
	if err != nil {
		t.Fatalf("reactor.New: %v", err)
	}
	t.Cleanup(func() {
		if err := r.Close(); err != nil {
			t.Errorf("reactor Close: %v", err)
			return
		}
		NoneLeft(t, r)
	})
	return r
}
