package reactor_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
)

// reports collects what a reactor reports.
type reports struct {
	mu   sync.Mutex
	msgs []string
	errs []error
}

func (p *reports) add(_ event.Event, msg string, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.msgs = append(p.msgs, msg)
	p.errs = append(p.errs, err)
}

func (p *reports) snapshot() ([]string, []error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.msgs...), append([]error(nil), p.errs...)
}

// newReactor returns a reactor whose reports are collected, closed at the
// end of the test with a check that nothing is left alive (conform.NoneLeft).
func newReactor(t *testing.T) (*reactor.Reactor, *reports) {
	t.Helper()
	rep := &reports{}
	return conform.NewReactor(t, reactor.Options{OnReport: rep.add}), rep
}

// forEachDriver runs fn as a subtest per driver (conform.EachDriver), each
// on a new reactor of that driver, closed at the end if fn did not and
// checked to hold nothing (conform.NewReactor).
func forEachDriver(t *testing.T, fn func(t *testing.T, r *reactor.Reactor)) {
	t.Helper()
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		fn(t, conform.NewReactor(t, reactor.Options{Driver: d}))
	})
}

// serve runs r.Serve in a goroutine until the returned stop is called.
func serve(t *testing.T, r *reactor.Reactor) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Serve(ctx) }()
	waitFor(t, "the loop to run", func() bool { return r.Stats().Running })
	return func() {
		cancel()
		if err := <-done; err != context.Canceled {
			t.Errorf("Serve returned %v, want context.Canceled", err)
		}
	}
}

// waitFor polls cond; the deadline only turns a hang into a failure.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(100 * time.Microsecond)
	}
}

func runCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}
