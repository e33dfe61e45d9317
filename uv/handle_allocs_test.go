package uv

import (
	"runtime/metrics"
	"testing"

	"github.com/uvevent/uvevent/internal/buildmode"
	uvcgo "github.com/uvevent/uvevent/internal/cgo"
	"github.com/uvevent/uvevent/reactor"
)

// TestOpenCoreOnLoopLeavesNoGarbage: making a kind's handle on the loop
// (openCore, as every accepted connection's is made on the libuv driver,
// adoptIO) allocates nothing of its own: its functions are only called,
// so they stay on the caller's stack, and a connection's set-up leaves no
// garbage behind it (newCore's functions and its error, four allocations
// for each, went to the heap before). k handles are made in one call on
// the loop: the test kind's create allocates one of its own for each (the
// C handle's out-parameter; an accept's Adopt none), and what the
// reactor's table allocates as it grows is a few for all of them. The C
// handles are libuv's: this is the libuv driver's path only.
func TestOpenCoreOnLoopLeavesNoGarbage(t *testing.T) {
	u := UvtNewReactorOn(t, reactor.DriverLibuv)
	const k = 1000
	evs := make([]*uvtTimerEvent, k)
	for i := range evs {
		evs[i] = &uvtTimerEvent{}
	}
	create := func(l *uvcgo.Loop, id uint64) (uvcgo.Handle, error) { return l.NewTestTimer(id) }
	var allocs uint64
	UvtMust(t, u.Call(func() {
		before := heapAllocs()
		for _, e := range evs {
			UvtMust(t, openCore(u.Reactor, &e.core, e, 0, create))
		}
		allocs = heapAllocs() - before
	}))
	for _, e := range evs {
		tm := &UvtLibuvTimer{e: e}
		track(tm, &tm.handle, &e.core)
		tm.Close()
	}
	switch {
	case buildmode.Instrumented() != "":
		t.Logf("%d allocations for %d handles, not judged: a -%s build changes what allocates", allocs, k, buildmode.Instrumented())
	case allocs >= k+k/10:
		t.Errorf("%d allocations for %d handles made on the loop, want fewer than %d: the set-up allocates for each", allocs, k, k+k/10)
	}
}

// heapAllocs returns the heap allocations this process has made so far,
// tiny ones counted one by one.
func heapAllocs() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:objects"}, {Name: "/gc/heap/tiny/allocs:objects"}}
	metrics.Read(s)
	return s[0].Value.Uint64() + s[1].Value.Uint64()
}
