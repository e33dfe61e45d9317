package uv_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/uv"
)

// TestIODrainBoundsAServer: a server written as ExampleIO_DrainAsync
// (Send below a high-water mark, DrainAsync above it) against a client
// that does not read: it stops producing with the queue bounded by the mark
// (plus one record), however much it has to send; once the client reads,
// the drain wait completes, the server goes on, and every byte arrives.
func TestIODrainBoundsAServer(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		const high, low, total = 1 << 20, 256 << 10, 32 << 20
		record := pattern(64 << 10)
		c, s := v.pair(t)
		stalled := make(chan int, 1) // the first stop
		var most atomic.Int64        // the most queued at a stop
		sent := 0
		var produce func()
		produce = func() {
			for sent < total {
				if q := s.Queued(); q >= high { // at the mark Send would refuse (ErrQueueFull)
					wait, err := s.DrainAsync(low)
					if err != nil {
						t.Errorf("DrainAsync: %v", err)
						return
					}
					if int64(q) > most.Load() {
						most.Store(int64(q))
					}
					select {
					case stalled <- q:
					default:
					}
					event.Subscribe(wait, func(_ event.Event, res any, err error) {
						if err != nil {
							t.Errorf("the drain wait failed: %v", err)
							return
						}
						if q := res.(int); q > low {
							t.Errorf("DrainAsync(%d) completed with %d queued", low, q)
						}
						produce()
					})
					return
				}
				if err := s.Send(record); err != nil {
					t.Errorf("Send: %v", err)
					return
				}
				sent += len(record)
			}
			s.CloseWrite()
		}
		uv.UvtMust(t, v.u.Call(produce))
		q := uv.UvtRecv(t, stalled, "the server stopping at its mark")
		if q > high+len(record) {
			t.Errorf("the server stopped with %d bytes queued, want at most %d", q, high+len(record))
		}
		if got := s.Queued(); got > high+len(record) {
			t.Errorf("with the client not reading, Queued = %d, want at most %d", got, high+len(record))
		}
		got, err := io.ReadAll(c)
		if err != nil || len(got) != total {
			t.Errorf("the client read %d bytes (%v), want %d", len(got), err, total)
		}
		if q := most.Load(); q > high+int64(len(record)) {
			t.Errorf("the server stopped with up to %d bytes queued, want at most %d", q, high+len(record))
		}
		v.finish(t, c, s)
	})
}

// TestIODrainAsync: at once when the queue is low enough already, ErrClosed
// when the IO closes first, EINVAL for a negative mark.
func TestIODrainAsync(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
		defer cancel()
		c, s := v.pair(t)
		f, err := c.DrainAsync(0)
		uv.UvtMust(t, err)
		if q, err := event.AwaitValue(ctx, f); q != 0 || err != nil {
			t.Errorf("DrainAsync(0) with nothing queued = %d, %v; want 0, nil", q, err)
		}
		if _, err := c.DrainAsync(-1); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("DrainAsync(-1) = %v, want EINVAL", err)
		}
		uv.UvtMust(t, c.Send(bytes.Repeat([]byte{1}, 16<<20)))
		f, err = c.DrainAsync(0)
		uv.UvtMust(t, err)
		uv.UvtMust(t, c.Close())
		if _, err := event.AwaitValue(ctx, f); !errors.Is(err, uv.ErrClosed) {
			t.Errorf("a drain wait when the IO closes = %v, want ErrClosed", err)
		}
		v.finish(t, s)
	})
}
