package uv_test

import (
	"bytes"
	"errors"
	"io"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/uvevent/uvevent/uv"
)

// TestIOSendHighWaterMark: Send to a peer that never reads is refused with
// ErrQueueFull once the IO's queue reaches its high-water mark (1 MiB by
// default), queuing nothing of the refused bytes, so the queue stays at
// most the mark plus one Send; once the peer reads, OnDrain fires once and
// Send is taken again; the peer gets exactly the bytes Send took, in
// order, none twice.
func TestIOSendHighWaterMark(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		c, s := v.pair(t)
		if m := c.HighWaterMark(); m != 1<<20 {
			t.Fatalf("HighWaterMark() = %d; want 1 MiB by default", m)
		}
		var drains atomic.Int32
		drained := make(chan error, 4)
		if _, err := c.OnDrain(func(q int, err error) {
			drains.Add(1)
			drained <- err
		}); err != nil {
			t.Fatalf("OnDrain: %v", err)
		}
		const chunk = 64 << 10
		data := pattern(64 << 20)
		off := 0 // data[:off] is what Send took
		var refusal error
		for off+chunk <= len(data) {
			if refusal = c.Send(data[off : off+chunk]); refusal != nil {
				break
			}
			off += chunk
			if q := c.Queued(); q > uv.DefaultHighWaterMark+chunk {
				t.Fatalf("%d bytes queued after Sends of %d; want at most the mark plus one Send", q, off)
			}
		}
		if !errors.Is(refusal, uv.ErrQueueFull) {
			t.Fatalf("Send after %d bytes to a peer that never reads: %v; want ErrQueueFull", off, refusal)
		}
		q := c.Queued()
		if q < uv.DefaultHighWaterMark || q > uv.DefaultHighWaterMark+chunk {
			t.Fatalf("refused with %d bytes queued; want the mark to the mark plus one Send", q)
		}
		// Refused again: nothing of it is queued.
		if err := c.Send(data[off : off+chunk]); !errors.Is(err, uv.ErrQueueFull) {
			t.Fatalf("second Send past the mark: %v; want ErrQueueFull", err)
		}
		if q2 := c.Queued(); q2 != q {
			t.Fatalf("a refused Send changed the queue: %d then %d bytes", q, q2)
		}
		if n := drains.Load(); n != 0 {
			t.Fatalf("OnDrain fired %d times before the peer read", n)
		}
		read := make(chan []byte, 1)
		go func() {
			b, err := io.ReadAll(s)
			if err != nil {
				t.Errorf("the peer's read: %v", err)
			}
			read <- b
		}()
		if err := uv.UvtRecv(t, drained, "OnDrain once the peer reads"); err != nil {
			t.Fatalf("OnDrain: %v", err)
		}
		if err := c.Send(data[off : off+chunk]); err != nil {
			t.Fatalf("Send after OnDrain: %v", err)
		}
		off += chunk
		uv.UvtMust(t, c.CloseWrite())
		got := uv.UvtRecv(t, read, "the peer's reads")
		if !bytes.Equal(got, data[:off]) {
			t.Errorf("the peer read %d bytes (first difference at %d); want the %d Send took", len(got), firstDiff(got, data[:off]), off)
		}
		if n := drains.Load(); n != 1 {
			t.Errorf("OnDrain fired %d times; want once", n)
		}
		v.finish(t, c, s)
	})
}

// TestIOSetHighWaterMark: a mark of 0 refuses every Send while a byte
// waits, a negative one is refused with EINVAL, and the mark set is the one
// read back.
func TestIOSetHighWaterMark(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		c, s := v.pair(t)
		if err := c.SetHighWaterMark(-1); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("SetHighWaterMark(-1) = %v; want EINVAL", err)
		}
		uv.UvtMust(t, c.SetHighWaterMark(0))
		if m := c.HighWaterMark(); m != 0 {
			t.Errorf("HighWaterMark() = %d after SetHighWaterMark(0)", m)
		}
		data := pattern(1 << 20)
		var err error
		for i := 0; i < 64 && err == nil; i++ {
			err = c.Send(data)
		}
		if !errors.Is(err, uv.ErrQueueFull) {
			t.Fatalf("Sends of 1 MiB with a mark of 0: %v; want ErrQueueFull", err)
		}
		if q := c.Queued(); q > len(data) {
			t.Errorf("%d bytes queued with a mark of 0; want at most one Send", q)
		}
		v.finish(t, c, s)
		if err := c.SetHighWaterMark(1); !errors.Is(err, uv.ErrClosed) {
			t.Errorf("SetHighWaterMark on a closed IO = %v; want ErrClosed", err)
		}
	})
}
