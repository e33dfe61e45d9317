package async_test

import (
	"context"
	"errors"
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

func (p *reports) snapshot() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.msgs...)
}

// newReactor returns a reactor whose reports are collected, closed at the
// end of the test with a check that nothing is left alive (conform.NoneLeft).
func newReactor(t *testing.T) (*reactor.Reactor, *reports) {
	t.Helper()
	rep := &reports{}
	return conform.NewReactor(t, reactor.Options{OnReport: rep.add}), rep
}

// testCtx bounds a test that would otherwise hang on a bug.
func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// run drives r until nothing is left to do.
func run(t *testing.T, r *reactor.Reactor) {
	t.Helper()
	if err := r.Run(testCtx(t)); err != nil {
		t.Fatal(err)
	}
}

// outcome returns a finished coroutine's value and error.
func outcome[T any](t *testing.T, c *reactor.Coroutine[T]) (T, error) {
	t.Helper()
	v, ok, err := c.Outcome()
	if !ok {
		t.Fatalf("%s has not finished", c.Info())
	}
	return v, err
}

// deadlockReport returns the report a deadlocked coroutine ended with.
func deadlockReport(t *testing.T, err error) *reactor.DeadlockError {
	t.Helper()
	var dl *reactor.DeadlockError
	if !errors.Is(err, event.ErrDeadlock) || !errors.As(err, &dl) {
		t.Fatalf("ended with %v, want a DeadlockError", err)
	}
	return dl
}
