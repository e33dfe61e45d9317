package async_test

import (
	"context"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/uvevent/uvevent/async"
	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
)

// A pool dropped without Close while a resource is lent destroys only its
// idle ones, once each: the lent resource is its borrower's, in use, and
// never reaches Destroy, not even after the reactor's Close.
func TestPoolDroppedKeepsLent(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		r, err := reactor.New(reactor.Options{Driver: d, OnReport: func(event.Event, string, error) {}})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		var mu sync.Mutex
		var destroyed []int
		lent := func() int {
			next := 0
			p, err := async.NewPool(r, async.PoolOptions[int]{
				Max: 3,
				New: func(context.Context) (int, error) {
					mu.Lock()
					defer mu.Unlock()
					next++
					return next, nil
				},
				Destroy: func(v int) {
					mu.Lock()
					destroyed = append(destroyed, v)
					mu.Unlock()
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			served := make(chan struct{})
			go func() { defer close(served); r.Serve(ctx) }()
			var vs []int
			for range 3 {
				v, err := p.Acquire().Await(ctx)
				if err != nil {
					t.Fatal(err)
				}
				vs = append(vs, v)
			}
			for _, v := range vs[1:] {
				if err := p.Release(v); err != nil {
					t.Fatal(err)
				}
			}
			cancel()
			<-served
			return vs[0]
		}()
		destroyedNow := func() []int {
			mu.Lock()
			defer mu.Unlock()
			return slices.Sorted(slices.Values(destroyed))
		}
		deadline := time.Now().Add(20 * time.Second)
		for len(destroyedNow()) < 2 {
			if time.Now().After(deadline) {
				t.Fatalf("the dropped pool destroyed %v, want its 2 idle resources", destroyedNow())
			}
			runtime.GC()
			if err := r.RunNoWait(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		for range 3 {
			runtime.GC()
		}
		want := []int{1, 2, 3}
		want = slices.DeleteFunc(want, func(v int) bool { return v == lent })
		if diff := cmp.Diff(want, destroyedNow()); diff != "" {
			t.Errorf("destroyed (-want +got), %d still lent:\n%s", lent, diff)
		}
	})
}
