package async_test

import (
	"context"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/uvevent/uvevent/async"
	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
)

// quietReactor returns a reactor on driver d whose reports are dropped,
// closed at the end of the test (a test may close it first).
func quietReactor(t *testing.T, d reactor.Driver) *reactor.Reactor {
	t.Helper()
	r, err := reactor.New(reactor.Options{Driver: d, OnReport: func(event.Event, string, error) {}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// ledger counts a pool's resources: New makes 1, 2, 3..., Destroy writes
// each value down, once per call.
type ledger struct {
	mu        sync.Mutex
	made      int
	destroyed []int
}

// New makes the next resource.
func (l *ledger) New(context.Context) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.made++
	return l.made, nil
}

// Destroy writes v down.
func (l *ledger) Destroy(v int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.destroyed = append(l.destroyed, v)
}

// Made returns how many resources New made.
func (l *ledger) Made() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.made
}

// Destroyed returns the values destroyed so far, sorted.
func (l *ledger) Destroyed() []int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Sorted(slices.Values(l.destroyed))
}

// countedPool returns a pool of at most max ints made and destroyed by l.
func countedPool(t *testing.T, r *reactor.Reactor, max int, l *ledger) *async.Pool[int] {
	t.Helper()
	p, err := async.NewPool(r, async.PoolOptions[int]{Max: max, New: l.New, Destroy: l.Destroy})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// serve runs r.Serve in a goroutine until the returned stop is called;
// stop returns once Serve has. ctx ends with stop, or past testCtx's bound.
func serve(t *testing.T, r *reactor.Reactor) (ctx context.Context, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(testCtx(t))
	served := make(chan struct{})
	go func() { defer close(served); r.Serve(ctx) }()
	return ctx, func() { cancel(); <-served }
}

// acquireN acquires n resources from p, in order.
func acquireN(ctx context.Context, t *testing.T, p *async.Pool[int], n int) []int {
	t.Helper()
	var vs []int
	for range n {
		v, err := p.Acquire().Await(ctx)
		if err != nil {
			t.Fatal(err)
		}
		vs = append(vs, v)
	}
	return vs
}

// releaseAll releases each of vs to p.
func releaseAll(t *testing.T, p *async.Pool[int], vs []int) {
	t.Helper()
	for _, v := range vs {
		if err := p.Release(v); err != nil {
			t.Fatal(err)
		}
	}
}

// collectUntil runs the collector, and turns r once without waiting when
// r is not nil, until done says so; past a bound that only a bug reaches,
// it fails the test with what failure says.
func collectUntil(t *testing.T, r *reactor.Reactor, done func() bool, failure func() string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !done() {
		if time.Now().After(deadline) {
			t.Fatal(failure())
		}
		runtime.GC()
		if r != nil {
			if err := r.RunNoWait(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(time.Millisecond)
	}
}
