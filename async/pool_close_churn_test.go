package async_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/uvevent/uvevent/async"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
)

// Borrowers acquire, release and discard flat out while the health check
// throws resources away and New is slow, and the reactor closes in the
// middle; each borrower gives back what it holds at the end. Every
// resource New made reaches Destroy exactly once: none twice, none lost.
func TestPoolEveryResourceDestroyedOnceAcrossReactorClose(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		r := quietReactor(t, d)
		var l ledger
		var checks atomic.Int32
		p, err := async.NewPool(r, async.PoolOptions[int]{
			Max: 4,
			New: func(ctx context.Context) (int, error) {
				time.Sleep(100 * time.Microsecond) // a dial: it may end after the Close began
				return l.New(ctx)
			},
			Destroy:    l.Destroy,
			Healthy:    func(int) bool { return checks.Add(1)%3 != 0 },
			CheckEvery: time.Millisecond,
		})
		if err != nil {
			t.Fatal(err)
		}
		served := make(chan struct{})
		go func() { defer close(served); r.Serve(context.Background()) }()
		var wg sync.WaitGroup
		for i := range 6 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var held []int
				defer func() {
					for _, v := range held {
						if err := p.Release(v); err != nil {
							t.Errorf("Release(%d) at the end: %v", v, err)
						}
					}
				}()
				for n := 0; ; n++ {
					ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
					v, err := p.Acquire().Await(ctx)
					cancel()
					if err != nil {
						if r.Stats().Running {
							continue
						}
						return // the reactor is closing or closed
					}
					switch (i + n) % 3 {
					case 0:
						held = append(held, v) // kept until the end
						if len(held) > 1 {
							p.Release(held[0])
							held = held[1:]
						}
					case 1:
						p.Release(v)
					case 2:
						p.Discard(v)
					}
				}
			}()
		}
		time.Sleep(30 * time.Millisecond) // let the churn run; not a decision
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		<-served
		wg.Wait()
		if err := p.Close(); err != nil {
			t.Errorf("the pool's Close: %v", err)
		}
		// A New still running when the reactor closed destroys its
		// resource once that Close is over, from a goroutine of its own.
		var made, lost int
		collectUntil(t, nil, func() bool {
			made, lost = l.Made(), 0
			times := map[int]int{}
			for _, v := range l.Destroyed() {
				times[v]++
			}
			for v := 1; v <= made; v++ {
				switch times[v] {
				case 0:
					lost++
				case 1:
				default:
					t.Fatalf("resource %d of %d destroyed %d times", v, made, times[v])
				}
			}
			return lost == 0
		}, func() string { return fmt.Sprintf("%d of %d resources never destroyed", lost, made) })
		t.Logf("%d resources made, each destroyed once", made)
	})
}
