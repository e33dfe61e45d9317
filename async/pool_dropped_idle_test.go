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

// A pool dropped without Close passes its idle resources to Destroy (a
// connection pool nobody can reach closes its connections), on the loop
// while its reactor lives, and after the reactor's Close all the same.
func TestPoolDroppedDestroysIdle(t *testing.T) {
	for _, closeFirst := range []bool{false, true} {
		name := map[bool]string{false: "reactor open", true: "reactor closed"}[closeFirst]
		t.Run(name, func(t *testing.T) {
			conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
				r, err := reactor.New(reactor.Options{Driver: d, OnReport: func(event.Event, string, error) {}})
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close()
				var mu sync.Mutex
				var destroyed []int
				func() {
					next := 0
					p, err := async.NewPool(r, async.PoolOptions[int]{
						Max: 2,
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
					ctx := context.Background()
					serveCtx, stop := context.WithCancel(ctx)
					served := make(chan struct{})
					go func() { defer close(served); r.Serve(serveCtx) }()
					a, err := p.Acquire().Await(ctx)
					if err != nil {
						t.Fatal(err)
					}
					b, err := p.Acquire().Await(ctx)
					if err != nil {
						t.Fatal(err)
					}
					if err := p.Release(a); err != nil {
						t.Fatal(err)
					}
					if err := p.Release(b); err != nil {
						t.Fatal(err)
					}
					stop()
					<-served
					if s := p.Stats(); s.Idle != 2 {
						t.Fatalf("pool stats %+v, want 2 idle", s)
					}
				}()
				if closeFirst {
					if err := r.Close(); err != nil {
						t.Fatal(err)
					}
				}
				deadline := time.Now().Add(30 * time.Second)
				for {
					runtime.GC()
					if !closeFirst {
						if err := r.RunNoWait(context.Background()); err != nil {
							t.Fatal(err)
						}
					}
					mu.Lock()
					got := slices.Clone(destroyed)
					mu.Unlock()
					if len(got) == 2 {
						slices.Sort(got)
						if diff := cmp.Diff([]int{1, 2}, got); diff != "" {
							t.Errorf("destroyed (-want +got):\n%s", diff)
						}
						return
					}
					if time.Now().After(deadline) {
						t.Fatalf("a dropped pool destroyed %v of its 2 idle resources", got)
					}
					time.Sleep(time.Millisecond)
				}
			})
		})
	}
}
