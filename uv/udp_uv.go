package uv

// The libuv driver's UDP socket: a uv_udp_t (internal/cgo/udp.c).

import (
	"os"

	"github.com/uvevent/uvevent/eventkind"
	uvcgo "github.com/uvevent/uvevent/internal/cgo"
	"github.com/uvevent/uvevent/reactor"
)

// udpEvent is the libuv driver's UDP event, a uv_udp_t, reachable from the
// reactor's id table until libuv's close callback ran. It never points
// back at its UDP.
type udpEvent struct {
	core
	udpState
	sending int // datagrams queued in libuv
}

func listenUvUDP(r *reactor.Reactor, network string, t tcpTarget) (*UDP, error) {
	e := &udpEvent{}
	e.udpState.init(e, r, network)
	if err := newCore(r, &e.core, e, 0, func(l *uvcgo.Loop, id uint64) (uvcgo.Handle, error) {
		h, err := l.NewUDP(id, t.family)
		if err != nil {
			return 0, sysError("socket", err)
		}
		// The errors name the system calls, as the pure-Go driver's and
		// package net's do (sysError).
		if err = sysError("bind", l.BindUDP(h, t.ip, t.port, t.zone, false, t.v6only)); err == nil {
			var ip []byte
			var port int
			var zone uint32
			ip, port, zone, err = l.UDPAddr(h)
			e.addr, err = udpAddr(ip, port, zone), sysError("getsockname", err)
		}
		if err != nil {
			l.CloseHandle(h)
			return 0, err
		}
		return h, nil
	}); err != nil {
		return nil, err
	}
	u := &UDP{e: &e.udpState}
	track(u, &u.handle, &e.core)
	return u, nil
}

func (e *udpEvent) kindName() string          { return "udp" }
func (e *udpEvent) notify(res any, err error) { eventkind.Notify(&e.Base, res, err) }
func (e *udpEvent) callbacks() int            { return eventkind.Callbacks(&e.Base) }
func (e *udpEvent) queued() int               { return e.sending }
func (e *udpEvent) release(k *keptDatagram)   { e.loop.Release(k.data, k.release) }

// laneFile makes a duplicate of the socket an os.File for the read lane
// (udp_lane.go), within the read lanes' budget (laneDup): libuv keeps its
// own descriptor, and receives nothing while the lane is open.
func (e *udpEvent) laneFile() (*os.File, *lazySock) {
	fd, err := e.loop.Fileno(e.h)
	if err != nil {
		return nil, nil
	}
	return laneDup(e.host, fd, "udp")
}

// wants: datagrams are wanted for a waiting ReadFrom, started or not.
func (e *udpEvent) wants(rec *uvcgo.Completion) bool { return rec.Kind == uvcgo.CompletionUDPRecv }

func (e *udpEvent) receive(on bool) error {
	if !on {
		return e.loop.UDPRecvStop(e.h)
	}
	return e.loop.UDPRecvStart(e.h)
}

func (e *udpEvent) completed(rec *uvcgo.Completion) {
	if e.closed {
		return
	}
	if rec.Kind == uvcgo.CompletionUDPSend {
		e.sending--
		if rec.Status < 0 && rec.Status != uvcgo.ECANCELED {
			e.werr = statusError("sendto", rec.Status)
		} else {
			e.out.Add(1)
		}
		return
	}
	if rec.Status < 0 {
		e.recvFailed(statusError("recvmmsg", rec.Status))
		return
	}
	p, from, trunc := uvcgo.Datagram(rec)
	d := Datagram{Data: p, Addr: e.sender(from.IP[:from.IPLen], from.Port, from.Zone), Truncated: trunc}
	if e.received(&d) {
		data, release := uvcgo.Take(rec)
		e.keep(keptDatagram{data, release, d})
	}
	e.update()
}

// send tries the socket (uv_udp_try_send) while nothing is queued, and
// queues a copy in libuv otherwise.
func (e *udpEvent) send(p []byte, t tcpTarget) error {
	if e.sending == 0 {
		sent, err := e.loop.UDPTrySend(e.h, p, t.ip, t.port, t.zone)
		if sent {
			e.out.Add(1)
		}
		if sent || err != nil {
			return sysError("sendto", err)
		}
	}
	if err := e.loop.UDPSend(e.h, p, t.ip, t.port, t.zone); err != nil {
		return sysError("sendto", err)
	}
	e.sending++
	return nil
}

// option sets o through libuv's uv_udp_set_*, which take addresses as
// strings: an interface is one of its IPv4 addresses on an IPv4 socket,
// "::%name" on an IPv6 one.
func (e *udpEvent) option(o udpOption) error {
	ifaddr := ""
	if o.ifi != nil {
		if o.v6 {
			ifaddr = "::%" + o.ifi.Name
		} else {
			var err error
			if ifaddr, err = ifAddr4(o.ifi); err != nil {
				return err
			}
		}
	}
	switch o.kind {
	case optBroadcast:
		return e.loop.UDPOption(e.h, uvcgo.UDPBroadcast, o.v)
	case optTTL:
		return e.loop.UDPOption(e.h, uvcgo.UDPTTL, o.v)
	case optMulticastTTL:
		return e.loop.UDPOption(e.h, uvcgo.UDPMulticastTTL, o.v)
	case optMulticastLoop:
		return e.loop.UDPOption(e.h, uvcgo.UDPMulticastLoop, o.v)
	case optMulticastIF:
		return e.loop.UDPMulticastInterface(e.h, ifaddr)
	}
	source := ""
	if o.source != nil {
		source = o.source.String()
	}
	return e.loop.UDPMembership(e.h, o.group.String(), ifaddr, source, o.join)
}

// readsSettled: none of the turn's records still to dispatch is a
// datagram of this UDP (udpDriver).
func (e *udpEvent) readsSettled() bool { return e.h == 0 || !e.host.ReadAhead(e.id) }
