package uv

import (
	"bytes"
	"encoding/binary"
	"net"
	"os"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/eventkind"
	uvcgo "github.com/uvevent/uvevent/internal/cgo"
	"github.com/uvevent/uvevent/reactor"
)

// The pure-Go driver's UDP. Its socket is a member of the reactor's epoll
// set (poller_go_linux.go), polled for EPOLLIN while it receives (started, a
// ReadFrom waiting, or datagrams kept and room for more: udpState.update)
// and for EPOLLOUT while datagrams are queued. Like libuv's uv__udp_io, a
// pass reads full batches until it has read udpBurst datagrams (at most
// udpBurst+udpBatch-1) before the other members get their turn (the set is
// level-triggered: the rest is reported again), and sends what is queued
// until the socket would block.

// udpBurst bounds the datagrams read in one pass, as libuv's count does: a
// pass starts no batch once it has read udpBurst.
const udpBurst = 32

// udpBufSize is the receive buffer of each datagram of a batch: 64 KiB,
// as libuv's chunks, which every UDP datagram fits (the largest payload is
// 65,507 bytes over IPv4, 65,527 over IPv6), so none is truncated, as none
// is by package net (TestUDPLargestDatagramWhole).
const udpBufSize = 64 << 10

// udpBatch is the most datagrams one recvmmsg(2) reads, as on the libuv
// driver (UV_UDP_RECVMMSG with room for 20).
const udpBatch = uvcgo.UDPBatch

// mmsghdr is struct mmsghdr: a message header and the length received.
type mmsghdr struct {
	hdr unix.Msghdr
	n   uint32
}

// udpBatchBufs is what one recvmmsg receives into: a buffer, a sender's
// address and a header per datagram, the headers pointing at the rest.
type udpBatchBufs struct {
	bufs  [udpBatch][udpBufSize]byte
	iov   [udpBatch]unix.Iovec
	names [udpBatch]unix.RawSockaddrAny
	msgs  [udpBatch]mmsghdr
}

// udpBatches holds receive buffers: a set is in use only during a pass,
// so a process's UDPs share a few.
var udpBatches = sync.Pool{New: func() any {
	b := new(udpBatchBufs)
	for i := range b.msgs {
		b.iov[i].Base = &b.bufs[i][0]
		b.iov[i].SetLen(udpBufSize)
		b.msgs[i].hdr.Name = (*byte)(unsafe.Pointer(&b.names[i]))
		b.msgs[i].hdr.Iov = &b.iov[i]
		b.msgs[i].hdr.SetIovlen(1)
	}
	return b
}}

// recv reads up to n datagrams (n <= udpBatch) with one recvmmsg(2),
// without blocking, and returns how many came.
func (b *udpBatchBufs) recv(fd, n int) (int, error) {
	for i := range n {
		b.msgs[i].hdr.Namelen = unix.SizeofSockaddrAny
		b.msgs[i].hdr.Flags = 0
	}
	for {
		got, errno := recvmmsg(fd, &b.msgs[0], n)
		if errno == unix.EINTR {
			continue
		}
		if errno != 0 {
			return 0, errno
		}
		return int(got), nil
	}
}

// datagram is the i-th datagram received: Data a view of its buffer, the
// sender's address s's (udpState.sender).
func (b *udpBatchBufs) datagram(i int, s *udpState) Datagram {
	m := &b.msgs[i]
	n := int(m.n)
	ip, port, zone := rawSender(&b.names[i])
	d := Datagram{Addr: s.sender(ip, port, zone), Truncated: m.hdr.Flags&unix.MSG_TRUNC != 0 || n > udpBufSize}
	if n > 0 { // an empty datagram has no Data, as on libuv
		d.Data = b.bufs[i][:min(n, udpBufSize)]
	}
	return d
}

// rawSender is a sender's address as the kernel wrote it: ip a view of sa
// (none for a family other than IPv4 and IPv6), the port and the scope.
func rawSender(sa *unix.RawSockaddrAny) (ip []byte, port int, zone uint32) {
	switch sa.Addr.Family {
	case unix.AF_INET:
		a := (*unix.RawSockaddrInet4)(unsafe.Pointer(sa))
		return a.Addr[:], int(binary.BigEndian.Uint16((*[2]byte)(unsafe.Pointer(&a.Port))[:])), 0
	case unix.AF_INET6:
		a := (*unix.RawSockaddrInet6)(unsafe.Pointer(sa))
		return a.Addr[:], int(binary.BigEndian.Uint16((*[2]byte)(unsafe.Pointer(&a.Port))[:])), a.Scope_id
	}
	return nil, 0, 0
}

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
	// inBatch is set while receiveBurst hands out a batch (udpDriver's
	// readsSettled).
	inBatch bool
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
	e.boundedReads = true // receiveBurst reads no more than the keep's room
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
	trackGo(u, &u.handle, r, e)
	return u, nil
}

func (e *goUDP) kindName() string { return "udp" }

// open makes the socket, bound to t, as libuv's uv_udp_init_ex and
// uv_udp_bind do (IPV6_V6ONLY for udp6), and reads the address it got.
func (e *goUDP) open(t tcpTarget) error {
	fd, err := socket(t.family, unix.SOCK_DGRAM, 0)
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
	if events&(epollErr|epollHup) != 0 {
		events |= e.mask
		if e.mask&epollIn == 0 {
			e.takeSocketError()
		}
	}
	if events&epollOut != 0 {
		e.sendQueued()
	}
	if events&epollIn != 0 {
		e.receiveBurst()
	}
	if !e.gone() {
		e.watch()
	}
}

// gone reports a UDP closed, or closing (a callback earlier in the pass
// closed it: its Free runs after the notification).
func (e *goUDP) gone() bool { return e.pl == nil || e.Flags().Has(event.Closed) }

// receiveBurst reads while the UDP receives, in batches of up to udpBatch
// (one recvmmsg each, as libuv's UV_UDP_RECVMMSG), until a batch comes
// short (the socket is empty) or the pass has read udpBurst: as libuv's
// uv__udp_recvmsg, every batch asks for a full udpBatch, so a socket that
// stays full is read udpBatch at a time (two batches, 40 datagrams, a
// pass), not with a last batch cut to the 12 left of udpBurst: 0.075
// system calls (recvmmsg and epoll_wait) a datagram on a full socket, as on
// the libuv driver, instead of 0.100 (TestUDPPassReadsFullBatches; the
// loop's other events still get their turn after each pass,
// TestUDPFloodLeavesRoomForTimersAndCalls). While no callback takes
// datagrams (not started, or started with none), or datagrams kept wait
// for the callbacks, a batch is no larger than what
// the waiting ReadFroms and the keep take, so no datagram read is dropped
// (TestUDPStopInCallbackKeepsTheRest).
func (e *goUDP) receiveBurst() {
	b := udpBatches.Get().(*udpBatchBufs)
	defer udpBatches.Put(b)
	for read := 0; read < udpBurst; {
		if e.gone() || !e.receiving {
			return
		}
		n := udpBatch
		if !e.delivering() || len(e.kept) > 0 { // what comes is kept: no more than the keep's room
			room := udpKept - len(e.kept)
			if e.lane.Load() != nil && !e.delivering() {
				room = 0 // with a read lane, what nobody asks for stays in the socket (udp_lane.go)
			}
			n = min(n, len(e.readers)+room)
		}
		if n <= 0 {
			// Nothing may be read: stop receiving, or the socket stays
			// polled for input found ready at every pass. (The last
			// callback's leaving stops it already: unsubscribed,
			// TestUDPReadLaneUnsubscribeLast.)
			e.update()
			return
		}
		got, err := b.recv(e.fd, n)
		switch err {
		case nil:
		case unix.EAGAIN:
			return
		default:
			e.recvFailed(os.NewSyscallError("recvmmsg", err))
			return
		}
		e.inBatch = true
		for i := range got {
			if e.gone() {
				e.inBatch = false
				return // closed by a callback: the rest of the batch goes with the socket
			}
			d := b.datagram(i, &e.udpState)
			if e.received(&d) {
				d.Data = bytes.Clone(d.Data) // the buffer is reused
				e.keep(keptDatagram{d: d})
			}
		}
		e.inBatch = false
		e.update()
		read += got
		if got < n {
			return // the socket is empty
		}
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
func (e *goUDP) callbacks() int            { return eventkind.Callbacks(&e.Base) }
func (e *goUDP) receive(bool) error        { return e.watch() }

// laneFile makes the socket itself an os.File for the read lane
// (udp_lane.go): from now on the file closes it (Free).
func (e *goUDP) laneFile() (*os.File, *lazySock) { return newLaneFile(e.fd, "udp"), nil }

// watch brings what the socket is polled for to what the UDP wants now:
// EPOLLIN while it receives, EPOLLOUT while datagrams are queued.
func (e *goUDP) watch() error {
	if e.pl == nil {
		return nil
	}
	var want uint32
	if e.receiving {
		want |= epollIn
	}
	if len(e.queue) > 0 {
		want |= epollOut
	}
	if err := e.pl.ctlMask(e.fd, e.mask, want); err != nil {
		return err
	}
	e.mask = want
	return nil
}

// The event's ops, in libuv's order: start, stop, getters, close.

func (o *goUDPOps) Arm() error {
	if err := o.startable(o.r); err != nil {
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
func (o *goUDPOps) Subscribed()        { o.subscribed() }
func (o *goUDPOps) Unsubscribed()      { o.unsubscribed() }

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
		if l := e.lane.Load(); l != nil {
			l.f.Close() // wakes a ReadFrom waiting in the netpoller; the socket closes once no recvfrom is in flight
		} else {
			unix.Close(e.fd)
		}
	}
}

// option sets o on the socket, with the options libuv's uv_udp_set_* set.
func (e *goUDP) option(o udpOption) error {
	ip, ip6 := unix.IPPROTO_IP, unix.IPPROTO_IPV6
	set := func(name string, level, opt, v int) error {
		return errnoError("setsockopt "+name, unix.SetsockoptInt(e.fd, level, opt, v))
	}
	index := 0
	if o.ifi != nil {
		index = o.ifi.Index
	}
	switch {
	case o.kind == optBroadcast:
		return set("SO_BROADCAST", unix.SOL_SOCKET, unix.SO_BROADCAST, o.v)
	case o.kind == optTTL && o.v6:
		return set("IPV6_UNICAST_HOPS", ip6, unix.IPV6_UNICAST_HOPS, o.v)
	case o.kind == optTTL:
		return set("IP_TTL", ip, unix.IP_TTL, o.v)
	case o.kind == optMulticastTTL && o.v6:
		return set("IPV6_MULTICAST_HOPS", ip6, unix.IPV6_MULTICAST_HOPS, o.v)
	case o.kind == optMulticastTTL:
		return set("IP_MULTICAST_TTL", ip, unix.IP_MULTICAST_TTL, o.v)
	case o.kind == optMulticastLoop && o.v6:
		return set("IPV6_MULTICAST_LOOP", ip6, unix.IPV6_MULTICAST_LOOP, o.v)
	case o.kind == optMulticastLoop:
		return set("IP_MULTICAST_LOOP", ip, unix.IP_MULTICAST_LOOP, o.v)
	case o.kind == optMulticastIF && o.v6:
		return set("IPV6_MULTICAST_IF", ip6, unix.IPV6_MULTICAST_IF, index)
	case o.kind == optMulticastIF: // by the interface's address too, as libuv names it
		m := &unix.IPMreqn{Ifindex: int32(index)}
		if o.ifi != nil {
			a, err := ifAddr4(o.ifi)
			if err != nil {
				return err
			}
			copy(m.Address[:], net.ParseIP(a).To4())
		}
		return errnoError("setsockopt IP_MULTICAST_IF", unix.SetsockoptIPMreqn(e.fd, ip, unix.IP_MULTICAST_IF, m))
	case o.source != nil:
		return e.sourceMembership(o, index)
	case o.v6:
		m := &unix.IPv6Mreq{Interface: uint32(index)}
		copy(m.Multiaddr[:], o.group)
		opt, name := joinOption(o.join, unix.IPV6_JOIN_GROUP, unix.IPV6_LEAVE_GROUP, "IPV6_JOIN_GROUP", "IPV6_LEAVE_GROUP")
		return errnoError("setsockopt "+name, unix.SetsockoptIPv6Mreq(e.fd, ip6, opt, m))
	}
	m := &unix.IPMreqn{Ifindex: int32(index)}
	copy(m.Multiaddr[:], o.group)
	if o.ifi != nil { // by the interface's address too, as libuv names it: none is EADDRNOTAVAIL there
		a, err := ifAddr4(o.ifi)
		if err != nil {
			return err
		}
		copy(m.Address[:], net.ParseIP(a).To4())
	}
	opt, name := joinOption(o.join, unix.IP_ADD_MEMBERSHIP, unix.IP_DROP_MEMBERSHIP, "IP_ADD_MEMBERSHIP", "IP_DROP_MEMBERSHIP")
	return errnoError("setsockopt "+name, unix.SetsockoptIPMreqn(e.fd, ip, opt, m))
}

// sourceMembership joins or leaves a group for one source: struct
// ip_mreq_source (IPv4: the interface named by an address of it, as libuv
// does) or struct group_source_req (IPv6), which golang.org/x/sys/unix has
// no setter for, laid out here.
func (e *goUDP) sourceMembership(o udpOption, index int) error {
	if !o.v6 {
		var req [12]byte // imr_multiaddr, imr_interface, imr_sourceaddr
		copy(req[0:4], o.group)
		if o.ifi != nil {
			a, err := ifAddr4(o.ifi)
			if err != nil {
				return err
			}
			copy(req[4:8], net.ParseIP(a).To4())
		}
		copy(req[8:12], o.source)
		opt, name := joinOption(o.join, unix.IP_ADD_SOURCE_MEMBERSHIP, unix.IP_DROP_SOURCE_MEMBERSHIP, "IP_ADD_SOURCE_MEMBERSHIP", "IP_DROP_SOURCE_MEMBERSHIP")
		return errnoError("setsockopt "+name, unix.SetsockoptString(e.fd, unix.IPPROTO_IP, opt, string(req[:])))
	}
	// gsr_interface (a uint32, padded to the alignment of a pointer, which
	// is struct sockaddr_storage's), then gsr_group and gsr_source, each a
	// sockaddr_storage (128 bytes).
	const ss, off = 128, int(unsafe.Sizeof(uintptr(0)))
	var req [off + 2*ss]byte
	binary.NativeEndian.PutUint32(req[0:], uint32(index))
	for i, a := range []net.IP{o.group, o.source} {
		sa := req[off+i*ss:] // a sockaddr_in6: family, port, flow info, address
		binary.NativeEndian.PutUint16(sa, unix.AF_INET6)
		copy(sa[8:24], a)
	}
	opt, name := joinOption(o.join, unix.MCAST_JOIN_SOURCE_GROUP, unix.MCAST_LEAVE_SOURCE_GROUP, "MCAST_JOIN_SOURCE_GROUP", "MCAST_LEAVE_SOURCE_GROUP")
	return errnoError("setsockopt "+name, unix.SetsockoptString(e.fd, unix.IPPROTO_IPV6, opt, string(req[:])))
}

// joinOption is the socket option (and its name) that joins, or leaves.
func joinOption(join bool, joinOpt, leaveOpt int, joinName, leaveName string) (int, string) {
	if join {
		return joinOpt, joinName
	}
	return leaveOpt, leaveName
}

// readsSettled: no batch is being handed out (udpDriver).
func (e *goUDP) readsSettled() bool { return !e.inBatch }
