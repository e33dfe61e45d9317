package async_test

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

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
				r := quietReactor(t, d)
				var l ledger
				func() {
					p := countedPool(t, r, 2, &l)
					ctx, stop := serve(t, r)
					releaseAll(t, p, acquireN(ctx, t, p, 2))
					stop()
					if s := p.Stats(); s.Idle != 2 {
						t.Fatalf("pool stats %+v, want 2 idle", s)
					}
				}()
				turn := r
				if closeFirst {
					if err := r.Close(); err != nil {
						t.Fatal(err)
					}
					turn = nil
				}
				collectUntil(t, turn, func() bool { return len(l.Destroyed()) == 2 }, func() string {
					return fmt.Sprintf("a dropped pool destroyed %v of its 2 idle resources", l.Destroyed())
				})
				if diff := cmp.Diff([]int{1, 2}, l.Destroyed()); diff != "" {
					t.Errorf("destroyed (-want +got):\n%s", diff)
				}
			})
		})
	}
}
