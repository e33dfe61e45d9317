package async_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/uvevent/uvevent/async"
	"github.com/uvevent/uvevent/reactor"
)

// A pool takes back only what it gave out: Release and Discard of a value
// it never lent (or lent and took back already) are refused, and change
// nothing: the value is not handed to the next acquirer, and Max holds.
func TestPoolRefusesForeignValues(t *testing.T) {
	r, _ := newReactor(t)
	var made atomic.Int32
	p, err := async.NewPool(r, async.PoolOptions[int]{
		New: func(context.Context) (int, error) { return int(made.Add(1)), nil },
		Max: 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c, err := reactor.Go(testCtx(t), r, func(ctx context.Context) (int, error) {
		if err := p.Release(42); !errors.Is(err, async.ErrNotAcquired) {
			t.Errorf("Release(42) before any Acquire = %v, want ErrNotAcquired", err)
		}
		for range 3 {
			if err := p.Discard(99); !errors.Is(err, async.ErrNotAcquired) {
				t.Errorf("Discard(99) = %v, want ErrNotAcquired", err)
			}
		}
		v, err := p.Acquire().Await(ctx)
		if err != nil || v != 1 {
			t.Errorf("first Acquire = %d, %v; want the made resource 1", v, err)
		}
		if err := p.Release(42); !errors.Is(err, async.ErrNotAcquired) {
			t.Errorf("Release(42) while 1 is out = %v, want ErrNotAcquired", err)
		}
		if err := p.Release(v); err != nil {
			t.Errorf("Release(%d) = %v", v, err)
		}
		if err := p.Release(v); !errors.Is(err, async.ErrNotAcquired) {
			t.Errorf("second Release(%d) = %v, want ErrNotAcquired", v, err)
		}
		w, err := p.Acquire().Await(ctx)
		if err != nil || w != 1 {
			t.Errorf("second Acquire = %d, %v; want 1 again", w, err)
		}
		if err := p.Discard(w); err != nil {
			t.Errorf("Discard(%d) = %v", w, err)
		}
		return 0, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	run(t, r)
	if _, err := outcome(t, c); err != nil {
		t.Fatal(err)
	}
	if s := p.Stats(); s.Size > 1 || made.Load() != 1 {
		t.Errorf("after foreign discards: %+v, %d made; want at most Max=1 and one made", s, made.Load())
	}
}
