package uv_test

import (
	"context"
	"errors"
	"math"
	"os"
	"testing"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/buildmode"
	"github.com/uvevent/uvevent/uv"
)

// TestIOCallbackPathAllocatesNothing: a message delivered to an OnRead
// callback that answers with Send allocates nothing, on either driver: the
// read reaches the callbacks as the IO's own *[]byte (a []byte would be
// boxed anew for every read), and a Send the socket takes whole copies
// nothing. Two IOs of a socket pair echo a byte back and forth; one run of
// the loop (Run, ended by Stop) is k round trips. What a run allocates
// outside the callback path (taking the loop, the watchdog) is the same
// whatever k is, so the allocations per run at k = 1000 and at k = 10 are
// equal exactly when a round trip allocates nothing.
func TestIOCallbackPathAllocatesNothing(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		a, z, err := uv.Pipe(u.Reactor)
		uv.UvtMust(t, err)
		one := []byte{1}
		_, err = z.OnRead(func(p []byte, err error) {
			if err == nil {
				z.Send(p)
			}
		})
		uv.UvtMust(t, err)
		n, k := 0, 0 // round trips left in this run, and per run: loop-owned
		_, err = a.OnRead(func(p []byte, err error) {
			if err != nil {
				return
			}
			if n--; n == 0 {
				u.Stop() // the run ends after this turn; the next one sends again
				return
			}
			a.Send(one)
		})
		uv.UvtMust(t, err)
		uv.UvtMust(t, a.Start())
		uv.UvtMust(t, z.Start())
		ctx := context.Background()
		run := func() {
			n = k
			uv.UvtMust(t, u.Call(func() { a.Send(one) }))
			uv.UvtMust(t, u.Run(ctx))
			if n != 0 {
				t.Fatalf("the run ended with %d round trips to go", n)
			}
		}
		judgeCallbackAllocs(t, "round trip", func(trips int) { k = trips }, run)
		a.Close()
		z.Close()
		uv.UvtShutdown(t, u, false)
	})
}

// judgeCallbackAllocs fails t unless a run of the loop allocates as much
// for 1000 deliveries (each a unit: a round trip, a datagram) as for 10:
// setK sets the deliveries of the runs to come, run runs the loop once.
// What a run allocates outside the callback path (taking the loop, the
// watchdog) is the same whatever the count is, so the two are equal
// exactly when a delivery allocates nothing. A build whose instrumentation
// changes what allocates (-race, -asan, -msan) is logged, not judged.
func judgeCallbackAllocs(t *testing.T, unit string, setK func(int), run func()) {
	t.Helper()
	perRun := func(k int) float64 {
		setK(k)
		run() // warm up: the buffers' pools, the slices that grow once
		return testing.AllocsPerRun(20, run)
	}
	// What other goroutines allocate meanwhile (a reactor an earlier test
	// left closing, the collector's cleanups) counts too, at random: the
	// measure is taken again, up to three times, and a path that
	// allocates does so in every one.
	var few, many float64
	for range 3 {
		if few, many = perRun(10), perRun(1000); many <= few {
			break
		}
	}
	switch {
	case buildmode.Instrumented() != "":
		t.Logf("%.0f allocations per run of 10 %ss, %.0f per run of 1000, not judged: a -%s build changes what allocates", few, unit, many, buildmode.Instrumented())
	case many > few:
		t.Errorf("%.0f allocations per run of 1000 %ss, %.0f per run of 10: the callback path allocates %.3f per %s, want 0", many, unit, few, (many-few)/990, unit)
	}
}

// TestIOConnReadWriteAllocatesNothing: a blocking Write and a blocking
// Read of a TCP connection (the net.Conn adapter, E1 through net.Conn)
// allocate nothing once the read lane is made, on either driver: the
// Read waits in the netpoller through a function made once with the lane
// (io_readlane.go), the Write goes out through the write lane. The peer
// echoes from its callbacks, which allocate nothing either.
func TestIOConnReadWriteAllocatesNothing(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		c, s := v.pair(t)
		var err error
		uv.UvtMust(t, v.u.Call(func() {
			if _, err = s.OnRead(func(p []byte, err error) {
				if err == nil {
					s.Send(p)
				}
			}); err == nil {
				err = s.Start()
			}
		}))
		uv.UvtMust(t, err)
		one, got := []byte{1}, make([]byte, 1)
		k := 100
		trips := func() {
			for range k {
				if _, err := c.Write(one); err != nil {
					t.Fatal(err)
				}
				if _, err := c.Read(got); err != nil {
					t.Fatal(err)
				}
			}
		}
		trips() // the lanes are made; the first Reads go through the loop
		judgeCallbackAllocs(t, "round trip", func(trips int) { k = trips }, trips)
		v.finish(t, c, s)
	})
}

// TestIOReadResultValidDuringCallback: the *[]byte a subscriber receives is
// the IO's own, rewritten for every read: after its callback it holds no
// bytes any more (never a view of a buffer the IO reused or freed), while
// a copy taken during the callback keeps them.
func TestIOReadResultValidDuringCallback(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		a, z, err := uv.Pipe(u.Reactor)
		uv.UvtMust(t, err)
		var kept *[]byte
		var copied []byte
		_, err = event.Subscribe(a, func(_ event.Event, res any, err error) {
			if p, ok := res.(*[]byte); ok && err == nil {
				kept, copied = p, append(copied, *p...)
				a.Close()
				z.Close()
			}
		})
		uv.UvtMust(t, err)
		uv.UvtMust(t, a.Start())
		uv.UvtMust(t, z.Send([]byte("hello")))
		uv.UvtMust(t, u.Run(context.Background()))
		if kept == nil {
			t.Fatal("no read reached the callback")
		}
		if string(copied) != "hello" || len(*kept) != 0 {
			t.Errorf("during the callback %q; after it the result holds %q, want nothing", copied, *kept)
		}
		uv.UvtShutdown(t, u, false)
	})
}

// TestIOConnKeepAliveCallsAllocate: the calls net/http's server makes on
// a keep-alive connection between two requests allocate what package
// net's do, on either driver: removing a deadline (none set, or one that
// passed), setting a read deadline in the past, the addresses (read once,
// then kept) allocate nothing; a Read past its deadline allocates its
// error only (one *net.OpError, as net's), not the addresses again.
func TestIOConnKeepAliveCallsAllocate(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		c, s := v.pair(t)
		one := make([]byte, 1)
		_, err := c.Write(one)
		uv.UvtMust(t, err)
		_, err = s.Read(one) // the read lane is made
		uv.UvtMust(t, err)
		s.RemoteAddr() // read once, then kept
		longAgo := time.Unix(1, 0)
		calls := []struct {
			name string
			fn   func()
			want float64
		}{
			{"SetReadDeadline(zero), none set", func() { s.SetReadDeadline(time.Time{}) }, 0},
			{"SetWriteDeadline(zero), none set", func() { s.SetWriteDeadline(time.Time{}) }, 0},
			{"SetReadDeadline(past) then SetReadDeadline(zero)", func() {
				s.SetReadDeadline(longAgo)
				s.SetReadDeadline(time.Time{})
			}, 0},
			{"RemoteAddr and LocalAddr", func() { s.RemoteAddr(); s.LocalAddr() }, 0},
			{"Read past the read deadline", func() {
				if _, err := s.Read(one); !errors.Is(err, os.ErrDeadlineExceeded) {
					t.Fatalf("Read past the deadline: %v, want os.ErrDeadlineExceeded", err)
				}
			}, 1},
		}
		for _, call := range calls {
			if call.want == 1 {
				uv.UvtMust(t, s.SetReadDeadline(longAgo))
			}
			// What other goroutines allocate meanwhile counts too, at
			// random: the least of three measures is judged.
			got := math.Inf(1)
			for range 3 {
				got = min(got, testing.AllocsPerRun(100, call.fn))
			}
			switch {
			case buildmode.Instrumented() != "":
				t.Logf("%s: %.0f allocations, not judged: a -%s build changes what allocates", call.name, got, buildmode.Instrumented())
			case got != call.want:
				t.Errorf("%s: %.2f allocations, want %.0f", call.name, got, call.want)
			}
		}
		uv.UvtMust(t, s.SetReadDeadline(time.Time{}))
		v.finish(t, c, s)
	})
}
