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
	var ne net.Error
	if !errors.Is(err, syscall.EMFILE) || !errors.As(err, &ne) || !ne.Temporary() { //nolint:staticcheck // http.Serve relies on it
		t.Errorf("acceptError(EMFILE) = %#v, want a temporary net.Error matching EMFILE", err)
	}
}
