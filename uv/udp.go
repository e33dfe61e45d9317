package uv

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"sync/atomic"
	"time"
	"weak"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/eventkind"
	"github.com/uvevent/uvevent/internal/kind"
	"github.com/uvevent/uvevent/reactor"
)

// A UDP is a UDP socket: the datagram side of I/O. Its own type rather than
// an IO, because a datagram is a message with an address, not part of a
// byte stream. Like an IO it can be used three ways:
//
//   - as an event: Start it and its callbacks get each datagram as a
//     *Datagram result (OnDatagram and Result give it as a Datagram
//     value), whose Data is a view of the buffer the datagram was
//     received into. The *Datagram is the UDP's own, rewritten for every
//     datagram so that delivering one allocates nothing: both are valid
//     only during the callback (after it the *Datagram reads as the zero
//     Datagram), copy the bytes to keep them. Datagrams in a row from one
//     sender share one *net.UDPAddr as their Addr: read it, do not change
//     it;
//   - goroutine-blocking: it is a net.PacketConn (ReadFrom, WriteTo,
//     deadlines);
//   - WriteTo never waits: a datagram the socket does not take at once is
//     copied and queued (Queued counts them).
//
// Datagrams that arrive while it is not started and no ReadFrom waits are
// kept, and so are those that come while it is started with no callback
// to receive them (they go to the first callback that subscribes, or to
// ReadFrom): nothing is delivered to nobody. On Linux, from the first
// ReadFrom that waits on the loop on (on the libuv driver only within the
// read lanes' budget of duplicates), the UDP keeps none ahead: while no
// callback receives, no ReadFrom waits on the loop and none is kept, they stay in
// the socket's buffer and a ReadFrom receives itself on its own goroutine, waiting in
// Go's netpoller as package net's does (the read lane, udp_lane.go; Close
// wakes it with ErrClosed, the read deadline bounds it, and it does not
// keep Run going: hold the reactor with Reactor.Hold, or run it with
// Serve, to keep Run going meanwhile). At most 64 (udpKept) are kept;
// then receiving pauses and later ones wait in the
// socket's buffer, which drops what does not fit (on the libuv driver,
// datagrams libuv had read already when the keep filled are dropped, and
// counted in Info). Closing fails a waiting ReadFrom with ErrClosed, and
// drops the datagrams still kept (counted dropped in Info).
//
// Datagrams are read in batches (recvmmsg, up to 20 a call) on both
// drivers, each into 64 KiB, so the largest datagram arrives whole, as
// package net receives it. Broadcast (SetBroadcast), TTL (SetTTL) and
// multicast (JoinGroup, JoinSourceSpecificGroup, SetMulticastInterface,
// SetMulticastLoopback, SetMulticastTTL) are set by methods; docs/io.md
// has them beside their socket options.
//
// On the libuv driver a UDP is a uv_udp_t, received into C buffers. On the
// pure-Go driver it is a Go-owned event over a non-blocking socket in the
// reactor's epoll set (udp_go.go), received into a Go buffer reused after
// the callback, with the same results, errors and lifetime. Either way the
// UDP is an event reference (see Lifetime in the package doc): started, it is held by its
// reactor whoever points at it; dropping a stopped one without Close is
// safe.
type UDP struct {
	handle
	e *udpState
}

// Datagram is one datagram received.
type Datagram struct {
	Data      []byte       // in a callback: a view of the receive buffer, valid during the callback
	Addr      *net.UDPAddr // the sender; shared by the datagrams in a row from one sender: do not change it
	Truncated bool         // larger than the receive buffer (64 KiB, which every UDP datagram fits on Linux): Data holds its start
}

// udpKept bounds the datagrams kept for readers to come.
const udpKept = 64

// udpState is what a UDP's event holds on either driver, and the logic
// both share: the datagrams kept for readers to come, the waiting
// ReadFroms, the read deadline and the counters. Its fields are touched on
// the loop, except the counters.
type udpState struct {
	drv     udpDriver // the event holding this state
	r       *reactor.Reactor
	network string
	addr    *net.UDPAddr
	ref     weak.Pointer[UDP]

	started, receiving, closed bool
	// boundedReads: the driver reads no more than the keep's room while
	// what it reads is kept (the pure-Go one), so a started UDP whose keep
	// is full stops receiving until the callbacks take it, rather than be
	// told of a socket it must not read, again and again. The libuv driver
	// cannot bound libuv's pass, and goes on receiving as before.
	boundedReads bool
	readers      []*udpRead
	kept         []keptDatagram
	// view is the *Datagram result a datagram reaches the callbacks in
	// (notifyDatagram), viewing while a notification holds it.
	view    Datagram
	viewing bool
	// from is the last sender's address, given again to the datagrams
	// that follow from the same sender (sender); fromZone its raw scope.
	from     *net.UDPAddr
	fromZone uint32
	dl       deadline
	dlt      *reactor.Timer // dl's
	werr     error          // a queued send that failed, for the next WriteTo
	// lane is the read lane (udp_lane.go), made at the first ReadFrom
	// that reaches the loop (laneTried), and never changed.
	lane      atomic.Pointer[udpLane]
	laneTried bool

	in, out, dropped atomic.Uint64
}

// udpDriver is a UDP's event as the code both drivers share sees it.
type udpDriver interface {
	// notify tells the UDP's callbacks.
	notify(res any, err error)
	// callbacks returns how many the UDP has (waits included).
	callbacks() int
	// receive starts or stops receiving (udpState.receiving says which).
	receive(on bool) error
	// send sends p to t at once, or queues a copy for when the socket
	// takes it; out counts what was sent.
	send(p []byte, t tcpTarget) error
	// queued returns the datagrams waiting for the socket.
	queued() int
	// release gives back the memory of a kept datagram.
	release(k *keptDatagram)
	// option sets a socket option (udp_options.go).
	option(o udpOption) error
	// laneFile returns the socket (the pure-Go driver's own, from now on
	// the file's to close; release nil) or a duplicate of it (libuv's,
	// which release closes) as an os.File in Go's netpoller, for the read
	// lane; nil when it cannot be made.
	laneFile() (f *os.File, release *lazySock)
	// readsSettled reports that no datagram the driver read is still to
	// be delivered (a callback may Stop mid-batch, and the rest of the
	// batch is kept after it): on libuv, none of the turn's records still
	// to dispatch is a datagram of this UDP; on the pure-Go driver, no
	// batch is being handed out. The lane opens only then, so that a
	// ReadFrom never waits in it while datagrams read before it wait for
	// the keep; the update after the batch opens it.
	readsSettled() bool
}

type udpRead struct {
	p    []byte
	n    int
	addr *net.UDPAddr
	err  error
	ch   chan struct{}
}

// keptDatagram is a datagram kept for readers to come: on the libuv driver
// its Data is a view of the C buffer data, given back with release.
type keptDatagram struct {
	data, release uintptr
	d             Datagram
}

var _ net.PacketConn = (*UDP)(nil)

// ListenUDP opens a UDP socket bound to address over network ("udp",
// "udp4" or "udp6"; port 0 lets the kernel pick). It is not started.
func ListenUDP(r *reactor.Reactor, network, address string) (*UDP, error) {
	if err := reactorMade("ListenUDP", r); err != nil {
		return nil, &net.OpError{Op: "listen", Net: network, Err: err}
	}
	t, err := resolveUDP(network, address)
	if err != nil {
		return nil, &net.OpError{Op: "listen", Net: network, Err: err}
	}
	var u *UDP
	if r != nil && r.Driver() == reactor.DriverGo {
		u, err = listenGoUDP(r, network, t)
	} else {
		u, err = listenUvUDP(r, network, t)
	}
	if err != nil {
		return nil, &net.OpError{Op: "listen", Net: network, Addr: udpAddr(t.ip, t.port, t.zone), Err: err}
	}
	u.e.ref = weak.Make(u)
	return u, nil
}

// resolveUDP resolves a UDP address as resolveTCP does a TCP one.
func resolveUDP(network, address string) (tcpTarget, error) {
	switch network {
	case "udp", "udp4", "udp6":
	default:
		return tcpTarget{}, net.UnknownNetworkError(network)
	}
	return resolveTCP("tcp"+network[3:], address)
}

// udpAddr makes a *net.UDPAddr of an address as the socket gave it.
func udpAddr(ip []byte, port int, zone uint32) *net.UDPAddr {
	return &net.UDPAddr{IP: net.IP(ip), Port: port, Zone: zoneName(zone)}
}

// UDPOf returns the UDP whose event ev is (as callbacks receive it), or
// nil.
func UDPOf(ev event.Event) *UDP {
	if u, ok := ev.(*UDP); ok {
		return u
	}
	if e, ok := ev.(interface{ udp() *udpState }); ok {
		return e.udp().ref.Value()
	}
	return nil
}

func (s *udpState) init(drv udpDriver, r *reactor.Reactor, network string) {
	s.drv, s.r, s.network = drv, r, network
}

func (s *udpState) udp() *udpState { return s }

func (s *udpState) describe() string {
	return fmt.Sprintf("UDP(%s %s, in=%d, out=%d, dropped=%d)", s.network, s.addr, s.in.Load(), s.out.Load(), s.dropped.Load())
}

// sender returns the *net.UDPAddr of a datagram's sender, ip (4 or 16
// bytes, none for an address of no IP family), port and zone as the
// socket gave them: the last sender's again when it is the same one, so
// that a run of datagrams from one sender allocates nothing.
func (s *udpState) sender(ip []byte, port int, zone uint32) *net.UDPAddr {
	if len(ip) == 0 {
		return nil
	}
	if a := s.from; a != nil && a.Port == port && s.fromZone == zone && bytes.Equal(a.IP, ip) {
		return a
	}
	s.from, s.fromZone = udpAddr(bytes.Clone(ip), port, zone), zone
	return s.from
}

// notifyDatagram hands d to the callbacks as a *Datagram: a pointer to the
// UDP's own view, so that the result goes into the notification's any
// without an allocation. The view holds d during the notification only and
// is cleared after it: a result kept past its callback reads as the zero
// Datagram, never as a buffer the UDP has reused or freed. A datagram
// notified while another notification holds the view gets a view of its
// own, as IO.notifyRead does.
func (s *udpState) notifyDatagram(d *Datagram) {
	if s.viewing {
		v := *d
		s.drv.notify(&v, nil)
		return
	}
	s.view, s.viewing = *d, true
	s.drv.notify(&s.view, nil)
	s.view, s.viewing = Datagram{}, false
}

// delivering reports whether datagrams go to the callbacks: started, with
// a callback (or a wait) to receive them. A started UDP with none keeps
// them as a stopped one does, for ReadFrom or the callback to come.
func (s *udpState) delivering() bool { return s.started && s.drv.callbacks() > 0 }

// subscribed: a callback joined. A started UDP receives again if it
// stopped with its keep full, and hands it what it kept, in a later turn
// (the callback may have joined inside a notification of this UDP).
func (s *udpState) subscribed() {
	if !s.started || s.closed {
		return
	}
	if len(s.kept) > 0 {
		kind.HostOf(s.r.Owner()).Queue(s.flush)
	}
	s.update()
}

// unsubscribed: a callback left. A started UDP whose last callback left
// stops receiving at once (update): what comes then stays in the socket
// for ReadFrom, or its read lane, instead of being read and kept.
func (s *udpState) unsubscribed() {
	if s.started && !s.closed {
		s.update()
	}
}

// received hands a datagram to the first waiting ReadFrom, else to the
// callbacks while delivering and nothing is kept, else reports that it
// must be kept (the driver makes it last and calls keep), else drops it.
func (s *udpState) received(d *Datagram) (keep bool) {
	s.in.Add(1)
	switch {
	case len(s.readers) > 0:
		rd := s.readers[0]
		s.readers = s.readers[1:]
		eventkind.ActiveDelta(s.r.Owner(), -1)
		rd.finish(copy(rd.p, d.Data), d.Addr, nil)
	case len(s.kept) == 0 && s.delivering():
		s.notifyDatagram(d)
	case len(s.kept) < udpKept:
		return true
	default:
		s.dropped.Add(1)
	}
	return false
}

// keep keeps a datagram for readers to come, or for the callbacks once
// those before it are delivered.
func (s *udpState) keep(k keptDatagram) {
	s.kept = append(s.kept, k)
	if s.delivering() {
		s.flush()
	}
}

// recvFailed fails the waiting ReadFroms with err, and tells the
// callbacks while started.
func (s *udpState) recvFailed(err error) {
	for _, rd := range s.takeReaders() {
		rd.finish(0, nil, err)
	}
	if s.started {
		s.drv.notify(nil, err)
	}
}

func (s *udpState) arm() error {
	s.started = true
	if len(s.kept) > 0 {
		go s.r.Post(s.flush) // not inside Start: see ioEvent.arm
	}
	return s.update()
}

func (s *udpState) disarm() {
	s.started = false
	s.update()
}

// update starts or stops receiving to match what is wanted. Once closed
// (a callback may close the UDP while it receives) the socket's close ends
// receiving: update leaves the handle alone.
func (s *udpState) update() error {
	if s.closed {
		s.receiving = false
		return nil
	}
	// Receiving while started or already receiving goes on until the keep
	// is full when no callback takes what comes (and, on a driver with
	// boundedReads, while kept datagrams wait for the callbacks too). With
	// a read lane, what nobody asks for stays in the socket: the lane's
	// next ReadFrom takes it (udp_lane.go).
	room := len(s.kept) < udpKept
	l := s.lane.Load()
	ahead := l == nil && (s.started || s.receiving) && room
	want := s.delivering() && (room || !s.boundedReads) || len(s.readers) > 0 || ahead
	if want && !s.receiving && l != nil && !l.shut() {
		return nil // a caller's ReadFrom holds the lane: it asks again when done
	}
	var err error
	if want != s.receiving {
		s.receiving = want
		err = s.drv.receive(want)
		if err != nil && want {
			s.receiving = false
		}
	}
	if l != nil {
		switch {
		case s.laneOpenable():
			if l.state.CompareAndSwap(rlaneShut, rlaneOpen) && udpLaneOpened != nil {
				udpLaneOpened()
			}
		case len(s.kept) > 0:
			// Datagrams read before receiving stopped (libuv's batch
			// in flight) go first, through the loop.
			l.shut()
		}
	}
	return err
}

// udpLaneOpened, when set (by a test), runs on the loop each time update
// opens a UDP's read lane.
var udpLaneOpened func()

// flush hands the kept datagrams to the callbacks while delivering.
func (s *udpState) flush() {
	for !s.closed && len(s.kept) > 0 && s.delivering() {
		k := s.kept[0]
		s.kept = s.kept[1:]
		s.notifyDatagram(&k.d)
		s.drv.release(&k)
	}
	s.update()
}

func (s *udpState) takeReaders() []*udpRead {
	rs := s.readers
	s.readers = nil
	eventkind.ActiveDelta(s.r.Owner(), -len(rs))
	return rs
}

// finish ends a ReadFrom: its caller gets an address of its own, not one
// datagrams share (sender).
func (rd *udpRead) finish(n int, addr *net.UDPAddr, err error) {
	if addr != nil {
		addr = ownAddr(addr.IP, addr.Port, addr.Zone)
	}
	rd.n, rd.addr, rd.err = n, addr, err
	rd.ch <- struct{}{}
}

// closing fails the waiting ReadFroms with ErrClosed and gives back the
// kept datagrams, counted dropped, when the event closes.
func (s *udpState) closing() {
	if s.closed {
		return
	}
	s.closed = true
	for _, rd := range s.takeReaders() {
		rd.finish(0, nil, ErrClosed)
	}
	s.dropped.Add(uint64(len(s.kept))) // counted in, never delivered
	for i := range s.kept {
		s.drv.release(&s.kept[i])
	}
	s.kept = nil
	s.dl.close(&s.dlt)
	s.closeLane()
}

// ReadFrom waits for the next datagram, copies it into p (a longer one is
// cut to len(p), as package net does) and returns its sender. Not on the
// loop goroutine, where it would never return (event.ErrOnLoop). While the
// loop receives nothing (no callback takes datagrams, no ReadFrom waits
// on the loop, none kept) it receives on the caller's goroutine, as
// package net does (the read lane, udp_lane.go).
func (u *UDP) ReadFrom(p []byte) (int, net.Addr, error) {
	if u == nil || u.e == nil {
		return 0, nil, errZero("UDP")
	}
	e := u.e
	if e.r.Owner().Owned() {
		return 0, nil, u.opError("read", event.ErrOnLoop)
	}
	if l := e.lane.Load(); l != nil && l.state.CompareAndSwap(rlaneOpen, rlaneBusy) {
		n, addr, err := e.readLane(l, p)
		if err != nil {
			return n, nil, u.opError("read", err)
		}
		return n, addr, nil
	}
	rd := &udpRead{p: p, ch: make(chan struct{}, 1)}
	var err error
	if x := e.r.Call(func() {
		switch {
		case e.closed:
			err = ErrClosed
		case len(e.kept) > 0:
			k := e.kept[0]
			e.kept = e.kept[1:]
			rd.finish(copy(p, k.d.Data), k.d.Addr, nil)
			e.drv.release(&k)
			e.update()
		case e.dl.expired():
			err = errTimeout
		default:
			e.makeLane() // the next ReadFroms take the lane (udp_lane.go)
			e.readers = append(e.readers, rd)
			eventkind.ActiveDelta(e.r.Owner(), 1)
			err = e.update()
		}
	}); x != nil {
		err = ErrClosed
	}
	if err != nil {
		return 0, nil, u.opError("read", err)
	}
	<-rd.ch
	if rd.err != nil {
		return rd.n, nil, u.opError("read", rd.err)
	}
	return rd.n, rd.addr, nil
}

// WriteTo sends p to addr (a *net.UDPAddr) and does not wait: what the
// socket does not take at once is copied and queued. A queued send that
// failed is reported by the next WriteTo.
func (u *UDP) WriteTo(p []byte, addr net.Addr) (int, error) {
	if u == nil || u.e == nil {
		return 0, errZero("UDP")
	}
	ua, ok := addr.(*net.UDPAddr)
	if !ok {
		return 0, u.opError("write", fmt.Errorf("uv: WriteTo %T: %w", addr, errInvalid))
	}
	ip := ua.IP.To4()
	if ip == nil || u.e.network == "udp6" {
		ip = ua.IP.To16()
	}
	t := tcpTarget{ip: ip, port: ua.Port, zone: zoneIndex(ua.Zone)}
	e := u.e
	var err error
	if x := e.r.Call(func() {
		switch {
		case e.closed:
			err = ErrClosed
		case e.werr != nil:
			err, e.werr = e.werr, nil
		default:
			err = e.drv.send(p, t)
		}
	}); x != nil {
		err = ErrClosed
	}
	if err != nil {
		return 0, u.opError("write", err)
	}
	return len(p), nil
}

// Queued returns the datagrams waiting for the socket to take them.
func (u *UDP) Queued() int {
	if u == nil || u.e == nil {
		return 0
	}
	n := 0
	u.e.r.Call(func() { n = u.e.drv.queued() })
	return n
}

// LocalAddr returns the address the socket is bound to.
func (u *UDP) LocalAddr() net.Addr {
	if u == nil || u.e == nil {
		return nil
	}
	return u.e.addr
}

// SetDeadline sets the read deadline; writes never wait.
func (u *UDP) SetDeadline(t time.Time) error { return u.SetReadDeadline(t) }

// SetWriteDeadline does nothing: WriteTo never waits.
func (u *UDP) SetWriteDeadline(time.Time) error {
	if u == nil || u.e == nil {
		return errZero("UDP")
	}
	return nil
}

// SetReadDeadline bounds the ReadFrom waiting now and to come, as
// IO.SetReadDeadline does Read.
func (u *UDP) SetReadDeadline(t time.Time) error {
	if u == nil || u.e == nil {
		return errZero("UDP")
	}
	e := u.e
	err := ErrClosed
	e.r.Call(func() {
		if !e.closed {
			err = e.dl.set(e.r, &e.dlt, t, func() {
				for _, rd := range e.takeReaders() {
					rd.finish(0, nil, errTimeout)
				}
				e.update()
			})
			if l := e.lane.Load(); l != nil && err == nil {
				l.f.SetReadDeadline(e.dl.time()) // the lane's wait has it too
			}
		}
	})
	if err != nil {
		return u.opError("set deadline", err)
	}
	return nil
}

func (u *UDP) opError(op string, err error) error {
	if u.e == nil { // the zero UDP: no socket to name
		return &net.OpError{Op: op, Net: "udp", Err: err}
	}
	return &net.OpError{Op: op, Net: u.e.network, Addr: u.e.addr, Err: err}
}
