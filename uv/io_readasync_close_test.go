package uv_test

import (
	"context"
	"testing"

	"github.com/uvevent/uvevent/uv"
)

// A ReadAsync whose future its holder closes stops counting as active at
// once: Run returns although no byte ever comes, and the IO's next reader
// gets the bytes that come later.
func TestReadAsyncClosedLetsRunEnd(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		a, b, err := uv.Pipe(u.Reactor)
		uv.UvtMust(t, err)
		f, err := a.ReadAsync(16)
		uv.UvtMust(t, err)
		uv.UvtMust(t, f.Close())
		ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
		defer cancel()
		if err := u.Run(ctx); err != nil {
			t.Fatalf("Run with only a closed read request left: %v", err)
		}
		if n := u.Stats().Active; n != 0 {
			t.Errorf("active after the request closed: %d, want 0", n)
		}
		g, err := a.ReadAsync(16)
		uv.UvtMust(t, err)
		uv.UvtMust(t, b.Send([]byte("later")))
		for !g.Done() {
			uv.UvtMust(t, u.RunOnce(ctx))
		}
		if got, _, err := g.Outcome(); err != nil || string(got) != "later" {
			t.Errorf("the next request got %q, %v; want \"later\"", got, err)
		}
		a.Close()
		b.Close()
		uv.UvtShutdown(t, u, false)
	})
}
