package uv

import (
	"errors"
	"net"
	"syscall"
	"testing"
)

// TestAcceptErrorTemporary: an accept error result matches its errno and
// is a temporary net.Error, which http.Serve retries after a pause.
func TestAcceptErrorTemporary(t *testing.T) {
	e := &listenEvent{network: "tcp4", addr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1}}
	err := e.acceptError(syscall.EMFILE)
	// http.Serve retries an accept error whose Temporary says so; the
	// method is deprecated on net.Error, so the test asks for it alone.
	var ne net.Error
	var tmp interface{ Temporary() bool }
	if !errors.Is(err, syscall.EMFILE) || !errors.As(err, &ne) || !errors.As(err, &tmp) || !tmp.Temporary() {
		t.Errorf("acceptError(EMFILE) = %#v, want a temporary net.Error matching EMFILE", err)
	}
}
