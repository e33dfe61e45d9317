package uv_test

import (
	"bytes"
	"errors"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/uvevent/uvevent/uv"
)

// TestWriteFailedReportsKernelBytes: a blocking Write that a write error
// ends (EPIPE: the peer shut its reading side down) reports the bytes of
// p the kernel took, as net.TCPConn's Write does, those of the request
// the error failed included: the transport writes a request in part as
// the socket drains (libuv's uv_write, the pure-Go driver's queue), and
// that part went out. The peer of a Unix socket pair, its buffers shrunk,
// takes some bytes past what the kernel took at once, shuts its reading
// side down (shutdown(2) SHUT_RD: the kernel takes no more, the writer's
// next write(2) fails with EPIPE) and reads what is left in its receive
// queue: it reads exactly every byte the kernel took, which must be
// p[:n]. On both drivers, the rounds varying how far the requests went.
func TestWriteFailedReportsKernelBytes(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		for i := range 12 {
			x := abortedUnixEnd(t, u)
			p := closedWriteData(i) // two transport requests: the error ends one, the other fails whole
			done, q := parkWrite(t, x.w, p)
			uv.UvtMust(t, x.rd.SetReadDeadline(time.Now().Add(uv.UvtSafety)))
			extra := closedWriteExtras[i%len(closedWriteExtras)] + i
			got := make([]byte, 0, len(p))
			if extra >= 0 {
				got = got[:min(len(p)-q+extra, len(p)-64<<10)] // the socket takes less than the rest: the Write does not complete
				if _, err := io.ReadFull(x.rd, got); err != nil {
					t.Fatalf("reading %d bytes before the shutdown: %v", len(got), err)
				}
			}
			uv.UvtMust(t, x.rd.(*net.UnixConn).CloseRead())
			got = drainEnd(t, x.rd, got)
			res := uv.UvtRecv(t, done, "the Write's return")
			type outcome struct {
				EPIPE          bool
				Reported, Read int
				Prefix         bool
			}
			want := outcome{EPIPE: true, Reported: len(got), Read: len(got), Prefix: true}
			saw := outcome{EPIPE: errors.Is(res.err, syscall.EPIPE), Reported: res.n, Read: len(got), Prefix: bytes.HasPrefix(p, got)}
			if diff := cmp.Diff(want, saw); diff != "" {
				t.Errorf("extra %d, %d bytes queued at the park: Write = %d, %v (-want +got):\n%s", extra, q, res.n, res.err, diff)
			}
			x.w.Close()
			x.done()
		}
		stop()
		uv.UvtShutdown(t, u, false)
	})
}
