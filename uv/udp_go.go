package uv

import (
	"bytes"
	"net"
	"os"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/eventkind"
	"github.com/uvevent/uvevent/reactor"
)

// The pure-Go driver's UDP. Its socket is a member of the reactor's epoll
// set (poller_go.go), polled for EPOLLIN while it receives (started, a
// ReadFrom waiting, or datagrams kept and room for more: udpState.update)
// and for EPOLLOUT while datagrams are queued. Like libuv's uv__udp_io, a
// pass reads at most udpBurst datagrams before the other members get their
// turn (the set is level-triggered: the rest is reported again), and sends
// what is queued until the socket would block.

// udpBurst bounds the datagrams read in one pass, as libuv does.
const udpBurst = 32

// udpBufSize is the receive buffer: larger datagrams are truncated to it.
// It is the room the libuv driver's 64 KiB buffer leaves after the
// sender's address (a sockaddr_storage, internal/cgo/udp.h), so that a datagram is
// truncated alike on both drivers.
const udpBufSize = 64<<10 - 128

// udpBufs holds receive buffers: one is in use only during a pass, so a
// reactor's UDPs share a few.
var udpBufs = sync.Pool{New: func() any { return new([udpBufSize]byte) }}

// goUDP is the pure-Go driver's UDP event. The reactor's poller holds it
// until it closes; it never points back at its UDP.
type goUDP struct {
	event.Base
	udpState
	keeper
	fd    int
	pl    *goPoller // nil once closed
	mask  uint32    // the epoll bits fd is polled for (0: out of the set)
	queue []goDatagram
}

// goDatagram is a datagram the socket has not taken yet, copied.
type goDatagram struct {
	p  []byte
	to unix.Sockaddr
}

type goUDPOps goUDP

func listenGoUDP(r *reactor.Reactor, network string, t tcpTarget) (*UDP, error) {
	e := &goUDP{fd: -1}
	e.init(e, r, network)
	eventkind.Init(&e.Base, (*goUDPOps)(e), true, event.GoOwned)
	var err error
	if x := r.Call(func() {
		if err = armable(r); err != nil {
			return
		}
		if err = e.open(t); err != nil {
			return
		}
		if e.pl, err = joinPoller(r, e.fd, e); err != nil {
			unix.Close(e.fd)
			return
		}
	}); x != nil {
		return nil, x
	}
	if err != nil {
		return nil, err
	}
	u := &UDP{e: &e.udpState}
	// As on the libuv driver, a UDP dropped without Close while stopped is
	// closed; a started one holds it.
	trackGo(u, &u.Handle, r, e)
	return u, nil
}

func (e *goUDP) kindName() string { return "udp" }

// open makes the socket, bound to t, as libuv's uv_udp_init_ex and
// uv_udp_bind do (IPV6_V6ONLY for udp6), and reads the address it got.
func (e *goUDP) open(t tcpTarget) error {
	fd, err := unix.Socket(t.family, unix.SOCK_DGRAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return os.NewSyscallError("socket", err)
	}
	if err = e.bind(fd, t); err != nil {
		unix.Close(fd)
		return err
	}
	e.fd = fd
	return nil
}

func (e *goUDP) bind(fd int, t tcpTarget) error {
	if t.v6only {
		if err := unix.SetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_V6ONLY, 1); err != nil {
			return os.NewSyscallError("setsockopt", err)
		}
	}
	sa, err := t.sockaddr()
	if err != nil {
		return err
	}
	if err := unix.Bind(fd, sa); err != nil {
		return os.NewSyscallError("bind", err)
	}
	sa, err = unix.Getsockname(fd)
	if err != nil {
		return os.NewSyscallError("getsockname", err)
	}
	e.addr = udpAddrOf(sa)
	return nil
}

// udpAddrOf is a socket address as a *net.UDPAddr, as libuv's addresses
// are read (nil for a family that has none).
func udpAddrOf(sa unix.Sockaddr) *net.UDPAddr {
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		return udpAddr(bytes.Clone(a.Addr[:]), a.Port, 0)
	case *unix.SockaddrInet6:
		return udpAddr(bytes.Clone(a.Addr[:]), a.Port, a.ZoneId)
	}
	return nil
}

// fired receives and sends what epoll reported the socket ready for, on
// the loop. An error or hang-up stands for everything polled for, as in
// libuv: the receive reads the socket's error.
func (e *goUDP) fired(events uint32) {
	if e.gone() {
		return
	}
	if events&(unix.EPOLLERR|unix.EPOLLHUP) != 0 {
		events |= e.mask
		if e.mask&unix.EPOLLIN == 0 {
			e.takeSocketError()
		}
	}
	if events&unix.EPOLLOUT != 0 {
		e.sendQueued()
	}
	if events&unix.EPOLLIN != 0 {
		e.receiveBurst()
	}
	if !e.gone() {
		e.watch()
	}
}

// gone reports a UDP closed, or closing (a callback earlier in the pass
// closed it: its Free runs after the notification).
func (e *goUDP) gone() bool { return e.pl == nil || e.Flags().Has(event.Closed) }

// receiveBurst reads up to udpBurst datagrams while the UDP receives.
func (e *goUDP) receiveBurst() {
	buf := udpBufs.Get().(*[udpBufSize]byte)
	defer udpBufs.Put(buf)
	for range udpBurst {
		if e.gone() || !e.receiving {
			return
		}
		// With MSG_TRUNC, n is the datagram's own length, not what fit.
		n, from, err := unix.Recvfrom(e.fd, buf[:], unix.MSG_TRUNC)
		switch err {
		case nil:
		case unix.EAGAIN, unix.EINTR:
			return
		default:
			e.recvFailed(os.NewSyscallError("recvfrom", err))
			return
		}
		d := Datagram{Addr: udpAddrOf(from), Truncated: n > len(buf)}
		if n > 0 { // an empty datagram has no Data, as on libuv
			d.Data = buf[:min(n, len(buf))]
		}
		if e.received(&d) {
			d.Data = bytes.Clone(d.Data) // the buffer is reused
			e.keep(keptDatagram{d: d})
		}
		e.update()
	}
}

// takeSocketError reads and clears the socket's pending error when
// nothing receives (it would be reported at every pass), for the next
// WriteTo, as a failed queued send is.
func (e *goUDP) takeSocketError() {
	if n, err := unix.GetsockoptInt(e.fd, unix.SOL_SOCKET, unix.SO_ERROR); err == nil && n != 0 {
		e.werr = os.NewSyscallError("sendto", syscall.Errno(n))
	}
}

// send sends p at once while nothing is queued (libuv's uv_udp_try_send);
// what the socket does not take is queued, copied, and the socket polled
// for EPOLLOUT.
func (e *goUDP) send(p []byte, t tcpTarget) error {
	to, err := t.sockaddr()
	if err != nil {
		return err
	}
	if len(e.queue) == 0 {
		if sent, err := e.sendTo(p, to); sent || err != nil {
			return err
		}
	}
	e.queue = append(e.queue, goDatagram{bytes.Clone(p), to})
	if err := e.watch(); err != nil {
		e.queue = e.queue[:len(e.queue)-1] // refused: nothing would send it
		return err
	}
	return nil
}

// sendTo sends one datagram: not sent and no error means the socket would
// block (libuv counts ENOBUFS as that too).
func (e *goUDP) sendTo(p []byte, to unix.Sockaddr) (sent bool, err error) {
	switch err := unix.Sendto(e.fd, p, 0, to); err {
	case nil:
		e.out.Add(1)
		return true, nil
	case unix.EAGAIN, unix.ENOBUFS, unix.EINTR:
		return false, nil
	default:
		return false, os.NewSyscallError("sendto", err)
	}
}

// sendQueued sends the queued datagrams until the socket would block; one
// that fails is reported by the next WriteTo.
func (e *goUDP) sendQueued() {
	for len(e.queue) > 0 {
		q := e.queue[0]
		sent, err := e.sendTo(q.p, q.to)
		if !sent && err == nil {
			return
		}
		e.queue[0] = goDatagram{}
		e.queue = e.queue[1:]
		if err != nil {
			e.werr = err
		}
	}
	e.queue = nil
}

func (e *goUDP) queued() int               { return len(e.queue) }
func (e *goUDP) release(*keptDatagram)     {}
func (e *goUDP) notify(res any, err error) { eventkind.Notify(&e.Base, res, err) }
func (e *goUDP) receive(bool) error        { return e.watch() }

// watch brings what the socket is polled for to what the UDP wants now:
// EPOLLIN while it receives, EPOLLOUT while datagrams are queued.
func (e *goUDP) watch() error {
	if e.pl == nil {
		return nil
	}
	var want uint32
	if e.receiving {
		want |= unix.EPOLLIN
	}
	if len(e.queue) > 0 {
		want |= unix.EPOLLOUT
	}
	if err := e.pl.ctlMask(e.fd, e.mask, want); err != nil {
		return err
	}
	e.mask = want
	return nil
}

// The event's ops, in libuv's order: start, stop, getters, close.

func (o *goUDPOps) Arm() error {
	if err := armable(o.r); err != nil {
		return err
	}
	return o.holdIfArmed(o.arm())
}

func (o *goUDPOps) Disarm() {
	o.disarm()
	o.dropRef()
}
func (o *goUDPOps) Owner() event.Owner { return o.r.Owner() }
func (o *goUDPOps) Event() event.Event { return (*goUDP)(o) }
func (o *goUDPOps) Describe() string   { return o.describe() }

// Free fails the waiting ReadFroms, drops what is kept and queued, takes
// the socket out of the poller and closes it.
func (o *goUDPOps) Free(bool) {
	e := (*goUDP)(o)
	e.dropRef()
	e.closing()
	e.queue = nil
	if pl := e.pl; pl != nil {
		pl.ctlMask(e.fd, e.mask, 0)
		e.pl, e.mask = nil, 0
		pl.remove(e.fd) // out of the poller first, as every member: then its number is free
		unix.Close(e.fd)
	}
}
