package uv

import (
	"errors"
	"net"
	"os"
	"syscall"
	"testing"
)

// TestAcceptErrorTemporary: the error of a failed accept, after which the
// listener pauses, matches its errno and is a temporary net.Error, which
// http.Serve retries after a pause of its own; ENOMEM too, which is not
// temporary as an errno: the listener goes on after it all the same.
func TestAcceptErrorTemporary(t *testing.T) {
	for _, errno := range []syscall.Errno{syscall.EMFILE, syscall.ENOMEM} {
		var err error = &net.OpError{Op: "accept", Net: "tcp4", Addr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1},
			Err: &pausedError{os.NewSyscallError("accept", errno), acceptPauseMin}}
		// http.Serve retries an accept error whose Temporary says so; the
		// method is deprecated on net.Error, so the test asks for it alone.
		var ne net.Error
		var tmp interface{ Temporary() bool }
		if !errors.Is(err, errno) || !errors.As(err, &ne) || ne.Timeout() || !errors.As(err, &tmp) || !tmp.Temporary() {
			t.Errorf("accept error %v = %#v, want a temporary net.Error matching it", errno, err)
		}
	}
}
