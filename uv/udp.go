package uv

import (
	"fmt"
	"net"
	"sync/atomic"
	"time"
	"weak"

	uvcgo "github.com/uvevent/uvevent/cgo"
	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
)

// A UDP is a UDP socket (uv_udp_t): the datagram side of I/O. Its own type
// rather than an IO, because a datagram is a message with an address, not
// part of a byte stream. Like an IO it can be used three ways:
//
//   - as an event: Start it and its callbacks get each datagram as a
//     *Datagram result, whose Data is a view of the C buffer libuv received
//     into: valid only during the callback;
//   - goroutine-blocking: it is a net.PacketConn (ReadFrom, WriteTo,
//     deadlines);
//   - WriteTo never waits: a datagram the socket does not take at once is
//     copied and queued (Queued counts them).
//
// Datagrams that arrive while it is not started and no ReadFrom waits are
// kept, up to udpKept; later ones are dropped, as a full socket buffer
// would. Closing fails a waiting ReadFrom with ErrClosed.
//
// A UDP is an event reference (see Handle): dropping it without Close is
// safe.
type UDP struct {
	Handle
	e *udpEvent
}

// Datagram is one datagram received.
type Datagram struct {
	Data      []byte       // in a callback: a view of C memory, valid during the callback
	Addr      *net.UDPAddr // the sender
	Truncated bool         // larger than the receive buffer (64 KiB): Data holds its start
}

// udpKept bounds the datagrams kept for readers to come.
const udpKept = 64

type udpEvent struct {
	core
	network string
	addr    *net.UDPAddr
	ref     weak.Pointer[UDP]

	started, receiving, closed bool
	readers                    []*udpRead
	kept                       []keptDatagram
	sending                    int // datagrams queued in libuv
	dl                         deadline
	werr                       error // a queued send that failed, for the next WriteTo

	in, out, dropped atomic.Uint64
}

type udpRead struct {
	p    []byte
	n    int
	addr *net.UDPAddr
	err  error
	ch   chan struct{}
}

type keptDatagram struct {
	data, release uintptr
	d             Datagram
}

var _ net.PacketConn = (*UDP)(nil)

// ListenUDP opens a UDP socket bound to address over network ("udp",
// "udp4" or "udp6"; port 0 lets the kernel pick). It is not started.
func ListenUDP(r *reactor.Reactor, network, address string) (*UDP, error) {
	t, err := resolveUDP(network, address)
	if err != nil {
		return nil, &net.OpError{Op: "listen", Net: network, Err: err}
	}
	e := &udpEvent{network: network}
	if err := newCore(r, &e.core, e, 0, func(l *uvcgo.Loop, id uint64) (uvcgo.Handle, error) {
		h, err := l.NewUDP(id, t.family)
		if err != nil {
			return 0, err
		}
		if err = l.BindUDP(h, t.ip, t.port, t.zone, false, t.v6only); err == nil {
			var ip []byte
			var port int
			var zone uint32
			ip, port, zone, err = l.UDPAddr(h)
			e.addr = &net.UDPAddr{IP: net.IP(ip), Port: port, Zone: tcpAddr(ip, port, zone).Zone}
		}
		if err != nil {
			l.CloseHandle(h)
			return 0, err
		}
		return h, nil
	}); err != nil {
		return nil, &net.OpError{Op: "listen", Net: network, Err: err}
	}
	u := &UDP{e: e}
	e.ref = weak.Make(u)
	track(u, &u.Handle, &e.core)
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

// UDPOf returns the UDP whose event ev is (as callbacks receive it), or
// nil.
func UDPOf(ev event.Event) *UDP {
	if u, ok := ev.(*UDP); ok {
		return u
	}
	if e, ok := ev.(*udpEvent); ok {
		return e.ref.Value()
	}
	return nil
}

func (e *udpEvent) kindName() string { return "udp" }

func (e *udpEvent) describe() string {
	return fmt.Sprintf("UDP(%s %s, in=%d, out=%d, dropped=%d)", e.network, e.addr, e.in.Load(), e.out.Load(), e.dropped.Load())
}

func (e *udpEvent) arm() error {
	e.started = true
	if len(e.kept) > 0 {
		go e.r.Post(e.flush) // not inside Start: see ioEvent.arm
	}
	return e.update()
}

func (e *udpEvent) disarm() {
	e.started = false
	e.update()
}

// wants: datagrams are wanted for a waiting ReadFrom, started or not.
func (e *udpEvent) wants(rec *uvcgo.Completion) bool { return rec.Kind == uvcgo.CompletionUDPRecv }

// update starts or stops receiving to match what is wanted.
func (e *udpEvent) update() error {
	want := !e.closed && e.h != 0 && (e.started || len(e.readers) > 0 || e.receiving && len(e.kept) < udpKept)
	if want == e.receiving {
		return nil
	}
	e.receiving = want
	if !want {
		return e.loop.UDPRecvStop(e.h)
	}
	if err := e.loop.UDPRecvStart(e.h); err != nil {
		e.receiving = false
		return err
	}
	return nil
}

func (e *udpEvent) completed(rec *uvcgo.Completion) {
	if e.closed {
		return
	}
	if rec.Kind == uvcgo.CompletionUDPSend {
		e.sending--
		if rec.Status < 0 && rec.Status != uvcgo.ECANCELED {
			e.werr = uvcgo.ErrorOf("uv_udp_send", int(rec.Status))
		} else {
			e.out.Add(1)
		}
		return
	}
	if rec.Status < 0 {
		err := uvcgo.ErrorOf("recv", int(rec.Status))
		for _, rd := range e.takeReaders() {
			rd.finish(0, nil, err)
		}
		if e.started {
			event.Notify(&e.Base, nil, err)
		}
		return
	}
	e.in.Add(1)
	p, ip, port, zone, trunc := uvcgo.Datagram(rec)
	d := Datagram{Data: p, Addr: &net.UDPAddr{IP: net.IP(ip), Port: port, Zone: tcpAddr(ip, port, zone).Zone}, Truncated: trunc}
	switch {
	case len(e.readers) > 0:
		rd := e.readers[0]
		e.readers = e.readers[1:]
		e.r.ActiveDelta(-1)
		rd.finish(copy(rd.p, p), d.Addr, nil)
	case e.started && len(e.kept) == 0:
		event.Notify(&e.Base, &d, nil)
	case len(e.kept) < udpKept:
		data, release := uvcgo.Take(rec)
		e.kept = append(e.kept, keptDatagram{data, release, d})
		if e.started {
			e.flush()
		}
	default:
		e.dropped.Add(1)
	}
	e.update()
}

// flush hands the kept datagrams to the callbacks while started.
func (e *udpEvent) flush() {
	for e.started && !e.closed && len(e.kept) > 0 {
		k := e.kept[0]
		e.kept = e.kept[1:]
		event.Notify(&e.Base, &k.d, nil)
		e.loop.Release(k.data, k.release)
	}
	e.update()
}

func (e *udpEvent) takeReaders() []*udpRead {
	rs := e.readers
	e.readers = nil
	e.r.ActiveDelta(-len(rs))
	return rs
}

func (rd *udpRead) finish(n int, addr *net.UDPAddr, err error) {
	rd.n, rd.addr, rd.err = n, addr, err
	rd.ch <- struct{}{}
}

func (e *udpEvent) closing() {
	if e.closed {
		return
	}
	e.closed = true
	for _, rd := range e.takeReaders() {
		rd.finish(0, nil, ErrClosed)
	}
	for _, k := range e.kept {
		e.loop.Release(k.data, k.release)
	}
	e.kept = nil
	e.dl.close()
}

// ReadFrom waits for the next datagram, copies it into p (a longer one is
// cut to len(p), as package net does) and returns its sender. Not on the
// loop goroutine, where it would never return (event.ErrOnLoop).
func (u *UDP) ReadFrom(p []byte) (int, net.Addr, error) {
	e := u.e
	if e.r.Owned() {
		return 0, nil, u.opError("read", event.ErrOnLoop)
	}
	rd := &udpRead{p: p, ch: make(chan struct{}, 1)}
	var err error
	if x := e.r.Exec(func() {
		switch {
		case e.closed:
			err = ErrClosed
		case len(e.kept) > 0:
			k := e.kept[0]
			e.kept = e.kept[1:]
			rd.finish(copy(p, k.d.Data), k.d.Addr, nil)
			e.loop.Release(k.data, k.release)
			e.update()
		case e.dl.expired:
			err = errTimeout
		default:
			e.readers = append(e.readers, rd)
			e.r.ActiveDelta(1)
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
	if x := e.r.Exec(func() {
		switch {
		case e.closed:
			err = ErrClosed
		case e.werr != nil:
			err, e.werr = e.werr, nil
		case e.sending == 0:
			var sent bool
			if sent, err = e.loop.UDPTrySend(e.h, p, t.ip, t.port, t.zone); sent || err != nil {
				if sent {
					e.out.Add(1)
				}
				return
			}
			fallthrough
		default:
			if err = e.loop.UDPSend(e.h, p, t.ip, t.port, t.zone); err == nil {
				e.sending++
			}
		}
	}); x != nil {
		err = ErrClosed
	}
	if err != nil {
		return 0, u.opError("write", err)
	}
	return len(p), nil
}

// Queued returns the datagrams waiting in libuv for the socket.
func (u *UDP) Queued() int {
	n := 0
	u.e.r.Exec(func() { n = u.e.sending })
	return n
}

// LocalAddr returns the address the socket is bound to.
func (u *UDP) LocalAddr() net.Addr { return u.e.addr }

// SetDeadline sets the read deadline; writes never wait.
func (u *UDP) SetDeadline(t time.Time) error { return u.SetReadDeadline(t) }

// SetWriteDeadline does nothing: WriteTo never waits.
func (u *UDP) SetWriteDeadline(time.Time) error { return nil }

// SetReadDeadline bounds the ReadFrom waiting now and to come, as
// IO.SetReadDeadline does Read.
func (u *UDP) SetReadDeadline(t time.Time) error {
	e := u.e
	err := ErrClosed
	e.r.Exec(func() {
		if !e.closed {
			err = e.dl.set(e.r, t, func() {
				for _, rd := range e.takeReaders() {
					rd.finish(0, nil, errTimeout)
				}
				e.update()
			})
		}
	})
	if err != nil {
		return u.opError("set deadline", err)
	}
	return nil
}

func (u *UDP) opError(op string, err error) error {
	return &net.OpError{Op: op, Net: u.e.network, Addr: u.e.addr, Err: err}
}
