package uv_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"testing"
	"time"

	"github.com/uvevent/uvevent/uv"
)

// TestIOWriteRetriesStayBounded: blocking Writes of 1 MiB to a peer that
// never reads, each timing out and retried, never hold more than 1 MiB
// beyond what the socket took, however often they time out (each used to
// leave its own 1 MiB queued: 20 retries, 20 MiB), and what they report
// written is exactly what the peer gets, in order.
func TestIOWriteRetriesStayBounded(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		c, s := v.pair(t)
		data := pattern(1 << 20)
		var sent bytes.Buffer
		p := data
		for i := range 20 {
			uv.UvtMust(t, c.SetWriteDeadline(time.Now().Add(5*time.Millisecond)))
			n, err := c.Write(p)
			if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("Write %d = %d, %v; want a timeout", i, n, err)
			}
			sent.Write(p[:n])
			if p = p[n:]; len(p) == 0 {
				p = data
			}
			if q := c.Queued(); q > 1<<20 {
				t.Fatalf("after %d timed-out Writes, %d bytes queued; want at most 1 MiB", i+1, q)
			}
		}
		uv.UvtMust(t, c.SetWriteDeadline(time.Time{}))
		read := make(chan []byte, 1)
		go func() {
			b, err := io.ReadAll(s)
			if err != nil {
				t.Errorf("the peer's read: %v", err)
			}
			read <- b
		}()
		uv.UvtMust(t, c.CloseWrite())
		got := uv.UvtRecv(t, read, "the peer's reads")
		if !bytes.Equal(got, sent.Bytes()) {
			t.Errorf("the peer read %d bytes (first difference at %d), want the %d reported written", len(got), firstDiff(got, sent.Bytes()), sent.Len())
		}
		v.finish(t, c, s)
	})
}
