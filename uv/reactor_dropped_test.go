package uv_test

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// A reactor dropped without Close — never run, or run and stopped — with
// events left in it (started and not) is collected, and frees its C loop,
// its descriptors (libuv's epoll and wake-up descriptors, the watcher's)
// and its goroutines: the counts come back after collections.
func TestReactorDroppedWithoutClose(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		base, fds := uv.UvtBaseline(t)
		const n = 20
		var collected atomic.Int32
		for i := range n {
			dropReactor(t, d, i%2 == 1, &collected)
		}
		uv.UvtWaitFor(t, "every dropped reactor to be collected", func() bool {
			runtime.GC()
			return collected.Load() == n
		})
		uv.UvtNoLeaks(t, base, fds)
	})
}

// dropReactor makes a reactor with a timer and a trigger (started) and an
// unstarted timer, runs one turn if run is set (starting the watcher of
// libuv's descriptor), and drops it.
func dropReactor(t *testing.T, d reactor.Driver, run bool, collected *atomic.Int32) {
	t.Helper()
	r, err := reactor.New(reactor.Options{Driver: d})
	if err != nil {
		t.Fatal(err)
	}
	runtime.AddCleanup(r, func(c *atomic.Int32) { c.Add(1) }, collected)
	tm, err := uv.NewTimer(r, time.Hour, 0)
	uv.UvtMust(t, err)
	uv.UvtMust(t, tm.Start())
	_, err = uv.NewTimer(r, time.Hour, 0)
	uv.UvtMust(t, err)
	tr, err := uv.NewTrigger(r)
	uv.UvtMust(t, err)
	uv.UvtMust(t, tr.Start())
	if run {
		uv.UvtMust(t, tr.Send())
		ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
		defer cancel()
		uv.UvtMust(t, r.RunOnce(ctx))
	}
}
