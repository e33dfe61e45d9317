package uv_test

import (
	"bytes"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/uv"
)

// ttyDropOutcome is what a terminal's close left: whether the master read
// a prefix of the bytes accepted, whether the bytes read and those
// reported dropped add up to every byte accepted, and the drop reports'
// kinds (each a *DropError matching ErrDropped, cause ErrClosed, no reset).
type ttyDropOutcome struct {
	Prefix, AddsUp bool
	Reports        int
	Kinds          []ttyDropKind
	Futures        []bool // each WriteAsync settled: ErrClosed, or nil when the master read all of it
}

type ttyDropKind struct{ Dropped, Closed, Reset bool }

// TestTTYCloseDropAccounts: however a terminal's IO closes with bytes
// queued (its Close, Close twice, Close made on the loop, the reactor's
// Close), and whatever is queued (Sends, WriteAsyncs, both), the master
// reads a prefix of the bytes accepted and the one drop report counts
// exactly the rest; with nothing queued no report comes. Both drivers.
func TestTTYCloseDropAccounts(t *testing.T) {
	type queue func(t *testing.T, w *uv.IO, data []byte) (futs []*event.Future[int], ends []int)
	sends := func(t *testing.T, w *uv.IO, data []byte) ([]*event.Future[int], []int) {
		for i := 0; i < len(data); i += 50000 {
			uv.UvtMust(t, w.Send(data[i:min(i+50000, len(data))]))
		}
		return nil, nil
	}
	asyncs := func(t *testing.T, w *uv.IO, data []byte) ([]*event.Future[int], []int) {
		var futs []*event.Future[int]
		var ends []int
		for i := 0; i < len(data); i += 70000 {
			f, err := w.WriteAsync(data[i:min(i+70000, len(data))])
			uv.UvtMust(t, err)
			futs, ends = append(futs, f), append(ends, min(i+70000, len(data)))
		}
		return futs, ends
	}
	mixed := func(t *testing.T, w *uv.IO, data []byte) ([]*event.Future[int], []int) {
		h := len(data) / 2
		uv.UvtMust(t, w.Send(data[:h]))
		f, err := w.WriteAsync(data[h:])
		uv.UvtMust(t, err)
		return []*event.Future[int]{f}, []int{len(data)}
	}
	type closer func(t *testing.T, u *uv.UvtReactor, x closedWriteEnd)
	ioClose := func(t *testing.T, u *uv.UvtReactor, x closedWriteEnd) { uv.UvtMust(t, x.w.Close()) }
	twice := func(t *testing.T, u *uv.UvtReactor, x closedWriteEnd) {
		uv.UvtMust(t, x.w.Close())
		uv.UvtMust(t, x.w.Close())
	}
	onLoop := func(t *testing.T, u *uv.UvtReactor, x closedWriteEnd) {
		var err error
		uv.UvtMust(t, u.Call(func() { err = x.w.Close() }))
		uv.UvtMust(t, err)
	}
	cases := []struct {
		name   string
		size   int
		queue  queue
		close  closer // nil: the reactor's Close
		queued bool   // bytes wait in the IO at the close
	}{
		{"sends", 300 << 10, sends, ioClose, true},
		{"writeasyncs", 300 << 10, asyncs, ioClose, true},
		{"mixed", 300 << 10, mixed, ioClose, true},
		{"sends closed twice", 300 << 10, sends, twice, true},
		{"sends closed on the loop", 300 << 10, sends, onLoop, true},
		{"writeasyncs closed on the loop", 300 << 10, asyncs, onLoop, true},
		{"sends, the reactor's close", 300 << 10, sends, nil, true},
		{"writeasyncs, the reactor's close", 300 << 10, asyncs, nil, true},
		{"nothing queued", 100, sends, ioClose, false},
		{"nothing queued, writeasync", 100, asyncs, ioClose, false},
		{"nothing queued, the reactor's close", 100, sends, nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
				stop := uv.UvtServe(t, u)
				x := closedTTYEnd(t, u)
				data := closedWriteData(len(c.name))[:c.size]
				futs, ends := c.queue(t, x.w, data)
				if c.queued {
					uv.UvtWaitFor(t, "bytes queued in the IO", func() bool { return x.w.Queued() > 0 })
				} else {
					uv.UvtWaitFor(t, "every byte written", func() bool { return x.w.Queued() == 0 })
				}
				if c.close == nil {
					stop()
					uv.UvtShutdown(t, u, c.queued)
				} else {
					c.close(t, u, x)
				}
				x.end()
				uv.UvtMust(t, x.rd.SetReadDeadline(time.Now().Add(uv.UvtSafety)))
				got := drainEnd(t, x.rd, nil)
				x.done()
				if c.close != nil {
					stop()
					uv.UvtShutdown(t, u, c.queued)
				}
				ds := drops(u)
				dropped := 0
				saw := ttyDropOutcome{Prefix: bytes.HasPrefix(data, got), Reports: len(ds)}
				for _, d := range ds {
					dropped += d.Bytes
					saw.Kinds = append(saw.Kinds, ttyDropKind{errors.Is(d, uv.ErrDropped), errors.Is(d, uv.ErrClosed), d.Reset})
				}
				saw.AddsUp = len(got)+dropped == len(data)
				want := ttyDropOutcome{Prefix: true, AddsUp: true}
				if c.queued {
					want.Reports = 1
					want.Kinds = []ttyDropKind{{Dropped: true, Closed: true}}
				}
				start := 0
				for i, f := range futs {
					_, ok, err := f.Outcome()
					// What of this write the master read: the bytes read
					// past its start, up to its end.
					read := min(max(len(got)-start, 0), ends[i]-start)
					whole := read == ends[i]-start
					saw.Futures = append(saw.Futures, ok && (errors.Is(err, uv.ErrClosed) || err == nil && whole))
					want.Futures = append(want.Futures, true)
					start = ends[i]
				}
				if diff := cmp.Diff(want, saw); diff != "" {
					t.Errorf("%d bytes accepted, the master read %d, %d reported dropped (-want +got):\n%s", len(data), len(got), dropped, diff)
				}
			})
		})
	}
}

// TestTTYCloseAfterWriteFailedReportsNothing: a terminal whose write
// failed (EIO: its master closed) drops nothing at its close that anyone
// was not told of: no drop report comes. Both drivers.
func TestTTYCloseAfterWriteFailedReportsNothing(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		x := closedTTYEnd(t, u)
		x.done() // the master closed: a write to the terminal fails with EIO
		if _, err := x.w.Write(closedWriteData(1)); err == nil {
			t.Fatalf("Write to a terminal whose master is closed succeeded")
		}
		_ = x.w.Send(closedWriteData(2)) // refused: the stream failed
		uv.UvtMust(t, x.w.Close())
		x.end()
		stop()
		uv.UvtShutdown(t, u, false)
		if diff := cmp.Diff(0, len(drops(u))); diff != "" {
			t.Errorf("drop reports after a failed write (-want +got):\n%s", diff)
		}
	})
}

// TestTTYCloseDropAccountsBehindTimedOutWrite: a blocking Write whose
// deadline passed reports the bytes it handed over (n); its stand-in op
// stays queued with those still in flight, and a Send waits behind it.
// The terminal's close drops what the master did not get of p[:n] and of
// the Send, and the report counts exactly that: no byte of the stand-in
// counted twice, none negative. Both drivers.
func TestTTYCloseDropAccountsBehindTimedOutWrite(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		x := closedTTYEnd(t, u)
		p := bytes.Repeat(closedWriteData(3), 8) // past the write window: part of it is never handed over
		uv.UvtMust(t, x.w.SetWriteDeadline(time.Now().Add(20*time.Millisecond)))
		n, err := x.w.Write(p)
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("Write to a master not reading = %d, %v; want a timeout", n, err)
		}
		tail := bytes.Repeat([]byte{0xfe}, 70000)
		uv.UvtMust(t, x.w.SetHighWaterMark(4<<20))
		uv.UvtMust(t, x.w.Send(tail))
		uv.UvtMust(t, x.w.Close())
		x.end()
		uv.UvtMust(t, x.rd.SetReadDeadline(time.Now().Add(uv.UvtSafety)))
		got := drainEnd(t, x.rd, nil)
		x.done()
		stop()
		uv.UvtShutdown(t, u, true)
		dropped := 0
		for _, d := range drops(u) {
			dropped += d.Bytes
		}
		accepted := append(p[:n:n], tail...)
		type outcome struct{ Prefix, AddsUp bool }
		saw := outcome{bytes.HasPrefix(accepted, got), len(got)+dropped == len(accepted)}
		if diff := cmp.Diff(outcome{true, true}, saw); diff != "" {
			t.Errorf("Write reported %d, %d bytes accepted, the master read %d, %d reported dropped (-want +got):\n%s", n, len(accepted), len(got), dropped, diff)
		}
	})
}
