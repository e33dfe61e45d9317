package async_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/uvevent/uvevent/async"
	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
)

// conn is a pooled resource for the tests.
type conn struct {
	id     int
	broken bool
}

func connPool(t *testing.T, r *reactor.Reactor, max int, destroyed *[]int) *async.Pool[*conn] {
	t.Helper()
	var made atomic.Int32
	p, err := async.NewPool(r, async.PoolOptions[*conn]{
		New:     func(ctx context.Context) (*conn, error) { return &conn{id: int(made.Add(1))}, nil },
		Destroy: func(c *conn) { *destroyed = append(*destroyed, c.id) },
		Max:     max,
		Healthy: func(c *conn) bool { return !c.broken },
		// The check runs every millisecond: the tests show it neither keeps
		// Run going nor hides a deadlock.
		CheckEvery: time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Two coroutines share one resource: the second waits for the first's
// Release and gets the same resource.
func TestPoolAcquireReleaseReuse(t *testing.T) {
	r, rep := newReactor(t)
	var destroyed []int
	p := connPool(t, r, 1, &destroyed)
	var ids []int
	user := func(ctx context.Context) (int, error) {
		c, err := p.Acquire().Await(ctx)
		if err != nil {
			return 0, err
		}
		ids = append(ids, c.id)
		if err := sleepFor(ctx, r, time.Millisecond); err != nil {
			return 0, err
		}
		return c.id, p.Release(c)
	}
	a, _ := reactor.Spawn(testCtx(t), r, user)
	b, _ := reactor.Spawn(testCtx(t), r, user)
	run(t, r) // returns although the health timer is armed: it is hidden
	for _, c := range []*reactor.Coroutine[int]{a, b} {
		if id, err := outcome(t, c); id != 1 || err != nil {
			t.Errorf("user = %d, %v", id, err)
		}
	}
	if diff := cmp.Diff(async.PoolStats{Size: 1, Idle: 1}, p.Stats()); diff != "" {
		t.Errorf("stats (-want +got):\n%s", diff)
	}
	p.Close()
	p.Close()
	if diff := cmp.Diff([]int{1}, destroyed); diff != "" {
		t.Errorf("destroyed at Close (-want +got):\n%s", diff)
	}
	if _, err := p.Acquire().Await(testCtx(t)); !errors.Is(err, async.ErrPoolClosed) {
		t.Errorf("Acquire after Close = %v", err)
	}
	if msgs := rep.snapshot(); len(msgs) != 0 {
		t.Errorf("reports %v", msgs)
	}
}

// The health check destroys an unhealthy idle resource; the next acquire
// gets a new one.
func TestPoolHealthCheck(t *testing.T) {
	r, _ := newReactor(t)
	var destroyed []int
	p := connPool(t, r, 2, &destroyed)
	defer p.Close()
	c, _ := reactor.Spawn(testCtx(t), r, func(ctx context.Context) (int, error) {
		first, err := p.Acquire().Await(ctx)
		if err != nil {
			return 0, err
		}
		first.broken = true
		p.Release(first)
		for len(destroyed) == 0 { // cooperative: destroyed is loop-owned
			if err := sleepFor(ctx, r, time.Millisecond); err != nil {
				return 0, err
			}
		}
		second, err := p.Acquire().Await(ctx)
		if err != nil {
			return 0, err
		}
		return second.id, p.Discard(second)
	})
	run(t, r)
	if id, err := outcome(t, c); id != 2 || err != nil {
		t.Errorf("second resource = %d, %v; want a new one, 2", id, err)
	}
	if diff := cmp.Diff([]int{1, 2}, destroyed); diff != "" {
		t.Errorf("destroyed (-want +got):\n%s", diff)
	}
}

// Acquiring what nobody will release is a deadlock, though the hidden
// health timer is armed.
func TestPoolExhaustedIsADeadlock(t *testing.T) {
	r, _ := newReactor(t)
	var destroyed []int
	p := connPool(t, r, 1, &destroyed)
	defer p.Close()
	c, _ := reactor.Spawn(testCtx(t), r, func(ctx context.Context) (int, error) {
		if _, err := p.Acquire().Await(ctx); err != nil {
			return 0, err
		}
		_, err := p.Acquire().Await(ctx) // the only one is held by this coroutine
		return 0, err
	})
	run(t, r)
	_, err := outcome(t, c)
	dl := deadlockReport(t, err)
	if got := dl.Waiters[0].Events[0]; got != "Pool.Acquire(size=1/1, idle=0, waiting=1)" {
		t.Errorf("waited event = %q", got)
	}
	if !strings.HasPrefix(dl.Waiters[0].Where, "async/pool_test.go:") {
		t.Errorf("where = %q", dl.Waiters[0].Where)
	}
}

// A factory error reaches the acquirer; Close fails waiting acquirers.
func TestPoolErrors(t *testing.T) {
	r, _ := newReactor(t)
	refused := errors.New("refused")
	p, _ := async.NewPool(r, async.PoolOptions[int]{
		New: func(context.Context) (int, error) { return 0, refused },
		Max: 1,
	})
	if _, err := p.Acquire().Await(testCtx(t)); !errors.Is(err, refused) {
		t.Errorf("Acquire with a failing factory = %v", err)
	}
	held, _ := async.NewPool(r, async.PoolOptions[int]{New: func(context.Context) (int, error) { return 7, nil }, Max: 1})
	if v, err := held.Acquire().Await(testCtx(t)); v != 7 || err != nil {
		t.Fatalf("Acquire = %v, %v", v, err)
	}
	waiting := held.Acquire()
	waiting.Start()
	held.Close()
	if _, err := waiting.Await(testCtx(t)); !errors.Is(err, async.ErrPoolClosed) {
		t.Errorf("waiting acquirer after Close = %v", err)
	}
	if err := held.Release(7); err != nil {
		t.Errorf("Release after Close = %v", err)
	}
	for name, opts := range map[string]async.PoolOptions[int]{
		"no New":                 {Max: 1},
		"Max 0":                  {New: func(context.Context) (int, error) { return 0, nil }},
		"Healthy, no CheckEvery": {New: func(context.Context) (int, error) { return 0, nil }, Max: 1, Healthy: func(int) bool { return true }},
	} {
		if _, err := async.NewPool(r, opts); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("%s: NewPool = %v, want EINVAL", name, err)
		}
	}
	p.Close()
}

func ExamplePool() {
	r, _ := reactor.New(reactor.Options{})
	defer r.Close()
	n := 0
	p, _ := async.NewPool(r, async.PoolOptions[string]{
		New: func(context.Context) (string, error) { n++; return fmt.Sprint("conn-", n), nil },
		Max: 1,
	})
	defer p.Close()
	var log []string
	for _, who := range []string{"a", "b"} {
		reactor.Spawn(context.Background(), r, func(ctx context.Context) (int, error) {
			c, err := p.Acquire().Await(ctx)
			if err != nil {
				return 0, err
			}
			log = append(log, who+" got "+c)
			return 0, p.Release(c)
		})
	}
	r.Run(context.Background())
	fmt.Println(log)
	// Output: [a got conn-1 b got conn-1]
}

var _ event.Typed[int] = (*async.Op[int])(nil)

// Parallel goroutines and cooperative coroutines share a pool of three:
// never more than three in use, every acquire served, nothing left waiting.
func TestPoolUnderLoad(t *testing.T) {
	r, _ := newReactor(t)
	var made atomic.Int32
	p, _ := async.NewPool(r, async.PoolOptions[int]{
		New: func(context.Context) (int, error) { return int(made.Add(1)), nil },
		Max: 3,
	})
	defer p.Close()
	var inUse, most atomic.Int32
	use := func(ctx context.Context) (int, error) {
		for range 50 {
			v, err := p.Acquire().Await(ctx)
			if err != nil {
				return 0, err
			}
			n := inUse.Add(1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			inUse.Add(-1)
			if err := p.Release(v); err != nil {
				return 0, err
			}
		}
		return 50, nil
	}
	g, _ := async.NewGroup[int](testCtx(t), r, async.GroupOptions{})
	for range 4 {
		g.Go(use)
		g.Spawn(use)
	}
	run(t, r)
	if _, err := g.Wait(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if most.Load() > 3 || made.Load() > 3 {
		t.Errorf("%d in use at once, %d made; want at most 3", most.Load(), made.Load())
	}
	if s := p.Stats(); s.Waiting != 0 || s.Idle != s.Size {
		t.Errorf("stats after the load: %+v", s)
	}
}
