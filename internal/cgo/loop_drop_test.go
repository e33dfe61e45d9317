//go:build cgo

package uvcgo

import (
	"errors"
	"net"
	"syscall"
	"testing"
)

// The loop of a dropped reactor (Abandon) that holds a listener which has
// accepted, and so keeps a spare handle for the next connection, closes the
// listening socket and frees the spare without counting it: the handle
// count ends at 0, not below, and nothing listens on the address any more.
func TestAbandonClosesAListener(t *testing.T) {
	l, err := NewLoop()
	if err != nil {
		t.Fatal(err)
	}
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Listen(fd, 16); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	addr := (&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: sa.(*syscall.SockaddrInet4).Port}).String()
	h, err := l.NewListener(7, fd, false, 128)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.ListenerStart(h); err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp4", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// The record's connection is not taken: the next turn closes it.
	turnUntil(t, l, func(d []Completion) bool {
		return len(d) == 1 && d[0].ID == 7 && d[0].Kind == CompletionConnection && d[0].Status == 0
	})
	l.closeAll()
	if got := l.Handles(); got != 0 {
		t.Errorf("Handles after closing all = %d, want 0", got)
	}
	if err := l.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if c, err := net.Dial("tcp4", addr); err == nil {
		c.Close()
		t.Errorf("dial %s after Abandon: connected, want ECONNREFUSED", addr)
	} else if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("dial %s after Abandon: %v, want ECONNREFUSED", addr, err)
	}
}
