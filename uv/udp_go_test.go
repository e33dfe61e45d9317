package uv

import (
	"errors"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/reactor"
)

// UvtUDPRoom is the receive buffer a datagram is truncated to, on either
// driver: on the libuv driver what the shim's 64 KiB buffer leaves after
// the sender's address.
const UvtUDPRoom = udpBufSize

// UvtUDPs returns how many UDP sockets u has (made and not yet freed), on
// either driver: Stats counts the pure-Go driver's sockets too.
func UvtUDPs(u *UvtReactor) int { return u.Stats().Handles["udp"] }

// On the pure-Go driver, a datagram sent while others are queued goes
// behind them; the queue goes out, in order, once the socket is writable;
// a queued datagram that fails is reported by the next WriteTo. (The
// socket of a loopback UDP never makes a sender wait: the queue is primed
// by hand.)
func TestGoUDPQueue(t *testing.T) {
	u := UvtNewReactorOn(t, reactor.DriverGo)
	a, err := ListenUDP(u.Reactor, "udp4", "127.0.0.1:0")
	UvtMust(t, err)
	b, err := ListenUDP(u.Reactor, "udp4", "127.0.0.1:0")
	UvtMust(t, err)
	e := a.Target().(*goUDP)
	to, err := unix.Getsockname(b.Target().(*goUDP).fd)
	UvtMust(t, err)
	var queued int
	u.Call(func() { // in one go: a pass would send the queue
		e.queue = append(e.queue,
			goDatagram{[]byte("first"), to},
			goDatagram{[]byte("bad"), &unix.SockaddrInet6{Port: 9}}, // not for an IPv4 socket
		)
		_, err = a.WriteTo([]byte("second"), b.LocalAddr())
		queued = a.Queued()
	})
	if err != nil || queued != 3 {
		t.Fatalf("WriteTo behind a queue of 2 = %v, Queued %d; want nil, 3", err, queued)
	}
	UvtTurnUntil(t, u, "the queue sent", func() bool { return a.Queued() == 0 })
	stop := UvtServe(t, u)
	buf := make([]byte, 10)
	for _, want := range []string{"first", "second"} {
		n, _, err := b.ReadFrom(buf)
		if err != nil || string(buf[:n]) != want {
			t.Fatalf("ReadFrom = %q, %v; want %q", buf[:n], err, want)
		}
	}
	if _, err := a.WriteTo([]byte("x"), b.LocalAddr()); !errors.Is(err, syscall.EAFNOSUPPORT) {
		t.Errorf("WriteTo after a queued send failed = %v, want its EAFNOSUPPORT", err)
	}
	if _, err := a.WriteTo([]byte("x"), b.LocalAddr()); err != nil {
		t.Errorf("the WriteTo after = %v", err)
	}
	var mask uint32
	u.Call(func() { mask = e.mask })
	if mask != 0 {
		t.Errorf("polled for %#x with nothing queued or received, want nothing", mask)
	}
	a.Close()
	b.Close()
	stop()
	UvtShutdown(t, u, false)
}
