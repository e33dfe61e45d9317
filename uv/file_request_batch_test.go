package uv_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/uv"
)

// TestFSRequestClosedByEarlierCompletion: two reads complete in one turn,
// and the callback of the first one dispatched closes the other, whose
// completion is still to come in the same turn. libuv has run that
// request's callback already and the shim has freed it: the close must not
// cancel it (uv_cancel on freed memory, or on another request made there
// since). The other read hears ErrClosed, its result is nobody's, and a
// write submitted from the callback runs. Repeated, since either read may
// be dispatched first.
func TestFSRequestClosedByEarlierCompletion(t *testing.T) {
	eachDriverCounted(t, func(t *testing.T, u *uv.UvtReactor, base, fds int) {
		name := filepath.Join(t.TempDir(), "f")
		uv.UvtMust(t, os.WriteFile(name, []byte("abcdef"), 0o600))
		stop := uv.UvtServe(t, u)
		f, err := uv.OpenFile(context.Background(), u.Reactor, name, os.O_RDWR, 0)
		uv.UvtMust(t, err)
		stop()
		for round := range 8 {
			r1, err := f.ReadAsync(1, 0)
			uv.UvtMust(t, err)
			r2, err := f.ReadAsync(1, 1)
			uv.UvtMust(t, err)
			// Once every worker is blocked behind the reads, both have
			// run: their completions wait for the same turn.
			blockers, _, release := holdPool(t, u)
			uv.UvtWaitFor(t, "the pool to be held", poolHeld)
			var first, closedHeard bool
			var w *uv.FSRequest[int]
			for _, pair := range [][2]*uv.FSRequest[[]byte]{{r1, r2}, {r2, r1}} {
				me, other := pair[0], pair[1]
				event.Subscribe(me, func(_ event.Event, _ any, err error) {
					if first || err != nil {
						if errors.Is(err, event.ErrClosed) {
							closedHeard = true
						}
						return
					}
					first = true
					if uv.UvtCancelable(other) {
						t.Errorf("round %d: a request whose completion is in this turn can still be cancelled", round)
					}
					w, err = f.WriteAsync([]byte("z"), 6)
					uv.UvtMust(t, err)
					uv.UvtMust(t, other.Close())
				})
			}
			uv.UvtMust(t, u.RunOnce(context.Background()))
			if !first || !closedHeard {
				t.Fatalf("round %d: after the turn: a read landed %v, the other heard ErrClosed %v", round, first, closedHeard)
			}
			done := release()
			uv.UvtMust(t, u.Run(context.Background()))
			done()
			for _, q := range blockers { // nobody took what the opens gave
				if f, ok, err := q.Outcome(); ok && err == nil {
					uv.UvtDropFile(f)
				}
			}
			if n, ok, err := w.Outcome(); !ok || n != 1 || err != nil {
				t.Errorf("round %d: the write made in the callback = %d, %v, %v; want 1, true, nil", round, n, ok, err)
			}
		}
		stop = uv.UvtServe(t, u)
		uv.UvtMust(t, f.Close())
		stop()
		uv.UvtShutdown(t, u, false)
		uv.UvtNoLeaks(t, base, fds)
	})
}
