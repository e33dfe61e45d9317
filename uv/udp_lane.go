package uv

import (
	"errors"
	"net"
	"os"
	"runtime"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// This file is a UDP's read lane, on both drivers, as an IO's
// (io_readlane.go): a ReadFrom made off the loop while the loop receives
// nothing does its non-blocking recvfrom(2) on the caller's goroutine and,
// when the socket is empty, waits in Go's netpoller for the descriptor, as
// package net's ReadFrom does: no hand-off to the loop and back per
// datagram.
//
// The lane is made at the first ReadFrom that reaches the loop, and is
// open only while the loop receives nothing: no callback takes datagrams
// (not started, or started without one), no ReadFrom parked on the loop,
// no datagram kept, the UDP open. With a lane the loop receives ahead for
// nobody: what no one asks for stays in the socket's buffer, where the
// next ReadFrom finds it. When the loop must receive (a Start with a
// callback, a Subscribe, a ReadFrom that found the lane taken) while a
// caller holds the lane, it marks it wanted and receives nothing; the
// caller, once its recvfrom is done, shuts the lane and asks the loop to
// look again. So the socket has one reader at a time, and each datagram
// goes to exactly one receiver. The states are the IO lane's (rlaneShut
// and the others); rlaneFailed stands for closed.
//
// The lane's file has the read deadline too (set with it, on the loop),
// so a ReadFrom waiting in the netpoller times out as one parked on the
// loop does. Close shuts the lane for good and closes the file, which
// wakes a ReadFrom waiting in the netpoller (ErrClosed); the descriptor
// closes once no recvfrom is in flight. On the pure-Go driver the file is
// the socket itself (closed by the event's Free, out of the reactor's epoll
// set first); on the libuv driver a duplicate, within the read lanes'
// budget (laneDup), closed as the UDP closes, before libuv's.

// udpLane is a UDP's read lane: its state, the descriptor's os.File, and
// the recvfrom in flight, held by the caller holding the lane (busy).
type udpLane struct {
	state   atomic.Int32
	f       *os.File
	rc      syscall.RawConn
	release *lazySock // libuv's duplicate; nil for the socket itself

	p       []byte
	n       int
	errno   syscall.Errno
	from    unix.RawSockaddrAny
	fromLen uint32
	// readFn is read as the function the netpoller's wait calls, and
	// relook the UDP's update, posted when a caller gives back a wanted
	// lane: both made once, so that a ReadFrom allocates neither.
	readFn func(fd uintptr) bool
	relook func()
}

// read is the lane's recvfrom(2) into p, for the netpoller's wait: false
// when the socket is empty and the wait goes on.
func (l *udpLane) read(fd uintptr) bool {
	for {
		l.from.Addr.Family, l.fromLen = 0, unix.SizeofSockaddrAny
		l.n, l.errno = recvfrom(int(fd), l.p, &l.from, &l.fromLen)
		if l.errno != unix.EINTR {
			return l.errno != unix.EAGAIN
		}
	}
}

// ownUDPAddr is a sender's address given to one ReadFrom, with room for
// its IP: one allocation (package net's ReadFrom makes two).
type ownUDPAddr struct {
	a  net.UDPAddr
	ip [16]byte
}

// ownAddr returns a *net.UDPAddr of its own for ip (at most 16 bytes),
// port and zone.
func ownAddr(ip []byte, port int, zone string) *net.UDPAddr {
	o := new(ownUDPAddr)
	o.a = net.UDPAddr{IP: o.ip[:copy(o.ip[:], ip)], Port: port, Zone: zone}
	return &o.a
}

// makeLane gives the UDP its read lane, on the loop, at the first
// ReadFrom that reaches it: a UDP received only by its callbacks never
// has one (nor its cost: the file, and, on the libuv driver, a
// descriptor). A lane whose file cannot wait in the netpoller is made
// failed (TestUDPReadLaneFileNotPolled).
func (s *udpState) makeLane() {
	if s.laneTried || s.closed || runtime.GOOS != "linux" { // recvfrom (sys_linux.go)
		return
	}
	s.laneTried = true
	f, release := s.drv.laneFile()
	if f == nil {
		return
	}
	rc, err := f.SyscallConn()
	if err != nil { // only for a nil or closed file: never this one
		panic("uv: the UDP read lane's file: " + err.Error())
	}
	err = f.SetReadDeadline(s.dl.time())
	l := &udpLane{f: f, rc: rc, release: release}
	l.readFn = l.read
	l.relook = func() { s.update() }
	if errors.Is(err, os.ErrNoDeadline) {
		// A file Go's netpoller does not hold cannot wait: the lane is
		// failed, never opened, and ReadFrom goes through the loop; the
		// file still closes what it owns as the UDP closes.
		l.state.Store(rlaneFailed)
	}
	s.lane.Store(l)
}

// laneOpenable reports that the loop holds nothing of the receiving
// side, nor has datagrams read and still to deliver (readsSettled): the
// lane may open. On the loop.
func (s *udpState) laneOpenable() bool {
	return !s.closed && !s.receiving && len(s.readers) == 0 && len(s.kept) == 0 && s.drv.readsSettled()
}

// shut takes the receiving side back for the loop; false when a caller
// holds the lane (it is marked wanted: the caller gives it back and asks
// the loop to look again). On the loop.
func (l *udpLane) shut() bool { return shutLaneState(&l.state) }

// closeLane shuts the lane for good as the UDP closes; a caller holding
// it gets ErrClosed once the file closes (the libuv driver's duplicate
// here; the pure-Go driver's socket by the event's Free, once out of the
// reactor's epoll set). On the loop.
func (s *udpState) closeLane() {
	l := s.lane.Load()
	if l == nil {
		return
	}
	l.state.Store(rlaneFailed)
	if l.release != nil {
		l.release.Close()
	}
}

// readLane receives into p on the caller's goroutine, the lane held,
// waiting in the netpoller while the socket is empty, and gives the lane
// back.
func (s *udpState) readLane(l *udpLane, p []byte) (int, *net.UDPAddr, error) {
	l.p = p
	werr := l.rc.Read(l.readFn)
	n, errno := l.n, l.errno
	var addr *net.UDPAddr
	if werr == nil && errno == 0 {
		ip, port, zone := rawSender(&l.from)
		if len(ip) > 0 {
			addr = ownAddr(ip, port, zoneName(zone))
		}
	}
	l.p, l.n, l.errno = nil, 0, 0 // the caller's buffer is not kept
	s.giveLaneBack(l)
	switch {
	case werr != nil: // the wait ended: the deadline passed, or the UDP closed
		return 0, nil, laneWaitErr(werr)
	case errno != 0: // a failure the socket reports (an ICMP error), as to net's ReadFrom
		return 0, nil, os.NewSyscallError("recvfrom", errno)
	}
	s.in.Add(1)
	return n, addr, nil
}

// giveLaneBack ends the holder's read: the lane is open again, or, when
// the loop wants to receive, shut and the loop asked to look again (or
// left closed).
func (s *udpState) giveLaneBack(l *udpLane) {
	if handLaneBack(&l.state) {
		s.r.Post(l.relook) // refused only once the reactor closed, and the UDP with it
	}
}
