package uv_test

import (
	"bytes"
	"errors"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/uv"
)

// TestWriteClosedOnSendFailureReportsWritten: a Send fails (the peer
// closed) while a blocking Write waits behind it, and the callback that
// hears the failure closes the IO at once. Nothing of the Write can have
// reached the kernel (the Send before it never went out whole, and the
// transport writes in order): it reports 0 bytes, on both drivers.
func TestWriteClosedOnSendFailureReportsWritten(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		x := abortedUnixEnd(t, u) // its buffers shrunk: the Send waits in the IO
		w := x.w
		closed := make(chan error, 1)
		_, err := event.Subscribe(w, func(ev event.Event, res any, err error) {
			var se *os.SyscallError
			if !errors.As(err, &se) || se.Syscall != "write" {
				return // the read side's end or reset: the Send's failure is what this waits for
			}
			select {
			case closed <- err:
				uv.UvtMust(t, ev.Close())
			default:
			}
		})
		uv.UvtMust(t, err)
		uv.UvtMust(t, w.Start())
		s := bytes.Repeat([]byte{0xfe}, 300<<10)
		uv.UvtMust(t, w.Send(s))
		done, _ := parkWrite(t, w, closedWriteData(1))
		uv.UvtWaitFor(t, "the Write queued behind the Send", func() bool { return w.Queued() > len(s) })
		x.done() // the peer closes: the Send's next write(2) fails
		werr := uv.UvtRecv(t, closed, "the Send's failure")
		res := uv.UvtRecv(t, done, "the Write's return")
		if diff := cmp.Diff(0, res.n); diff != "" || res.err == nil {
			t.Errorf("Write behind a failed Send = %d, %v (the Send failed with %v); want 0 bytes and an error (-want +got):\n%s", res.n, res.err, werr, diff)
		}
		stop()
		uv.UvtShutdown(t, u, false)
	})
}
