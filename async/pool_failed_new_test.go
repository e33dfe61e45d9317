package async_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/uvevent/uvevent/async"
	"github.com/uvevent/uvevent/reactor"
)

// When making a resource fails, one waiter gets the error; the others must
// still be served: their resource is no longer on its way, so the pool has
// to start another (within Max). Here Max is 1, the first New fails and the
// second would succeed: the second acquirer waits for ever.
func TestPoolFailedNewStillServesOtherWaiters(t *testing.T) {
	r, _ := newReactor(t)
	gate := make(chan struct{})
	var calls atomic.Int32
	p, err := async.NewPool(r, async.PoolOptions[int]{
		Max: 1,
		New: func(ctx context.Context) (int, error) {
			if calls.Add(1) == 1 {
				<-gate
				return 0, errors.New("dial failed")
			}
			return 42, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- r.Serve(ctx) }()
	defer func() { cancel(); <-served }()

	type res struct {
		v   int
		err error
	}
	got := make(chan res, 2)
	for range 2 {
		go func() {
			actx, acancel := context.WithTimeout(context.Background(), 5*time.Second) // safety bound
			defer acancel()
			v, err := p.Acquire().Await(actx)
			got <- res{v, err}
		}()
	}
	for p.Stats().Waiting < 2 {
		time.Sleep(time.Millisecond)
	}
	close(gate)
	var errs, ok int
	for range 2 {
		r := <-got
		switch {
		case errors.Is(r.err, context.DeadlineExceeded):
			t.Errorf("an acquirer waited for ever after the other one's New failed")
		case r.err != nil:
			errs++
		default:
			ok++
		}
	}
	if errs != 1 || ok != 1 {
		t.Errorf("outcomes: %d errors, %d resources; want 1 and 1", errs, ok)
	}
	p.Close()
}

// A New that keeps failing fails every waiter in turn, each with its own
// attempt's error, and leaves nothing counted in the pool.
func TestPoolFailingNewFailsEveryWaiter(t *testing.T) {
	r, _ := newReactor(t)
	var calls atomic.Int32
	p, err := async.NewPool(r, async.PoolOptions[int]{
		Max: 1,
		New: func(context.Context) (int, error) {
			return 0, fmt.Errorf("dial %d failed", calls.Add(1))
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	var cs []*reactor.Coroutine[int]
	for range 3 {
		c, _ := reactor.Spawn(testCtx(t), r, func(ctx context.Context) (int, error) { return p.Acquire().Await(ctx) })
		cs = append(cs, c)
	}
	run(t, r)
	var got []string
	for _, c := range cs {
		_, err := outcome(t, c)
		got = append(got, fmt.Sprint(err))
	}
	slices.Sort(got)
	if diff := cmp.Diff([]string{"dial 1 failed", "dial 2 failed", "dial 3 failed"}, got); diff != "" {
		t.Errorf("acquirers' errors (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(async.PoolStats{}, p.Stats()); diff != "" {
		t.Errorf("stats after (-want +got):\n%s", diff)
	}
	p.Close()
}
