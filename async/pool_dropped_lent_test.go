package async_test

import (
	"fmt"
	"runtime"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
)

// A pool dropped without Close while a resource is lent destroys only its
// idle ones, once each: the lent resource is its borrower's, in use, and
// never reaches Destroy, not even after the reactor's Close.
func TestPoolDroppedKeepsLent(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		r := quietReactor(t, d)
		var l ledger
		lent := func() int {
			p := countedPool(t, r, 3, &l)
			ctx, stop := serve(t, r)
			vs := acquireN(ctx, t, p, 3)
			releaseAll(t, p, vs[1:])
			stop()
			return vs[0]
		}()
		collectUntil(t, r, func() bool { return len(l.Destroyed()) >= 2 }, func() string {
			return fmt.Sprintf("the dropped pool destroyed %v, want its 2 idle resources", l.Destroyed())
		})
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		for range 3 {
			runtime.GC()
		}
		want := []int{1, 2, 3}
		want = slices.DeleteFunc(want, func(v int) bool { return v == lent })
		if diff := cmp.Diff(want, l.Destroyed()); diff != "" {
			t.Errorf("destroyed (-want +got), %d still lent:\n%s", lent, diff)
		}
	})
}
