package uv

import (
	"fmt"
	"net"
	"weak"

	"github.com/uvevent/uvevent/eventkind"
	uvcgo "github.com/uvevent/uvevent/internal/cgo"
	"github.com/uvevent/uvevent/reactor"
)

// This file is the libuv half of what listening and dialling share: an
// endpoint's calls on its transport's handle, a handle's addresses, and
// DialAsync's connect.

// uvCalls are an endpoint's calls on the libuv driver, made by its
// transport (pipeCalls, tcpCalls). They run on the loop.
type uvCalls struct {
	newHandle func(l *uvcgo.Loop, id uint64) (uvcgo.Handle, error)
	connect   func(l *uvcgo.Loop, h uvcgo.Handle) error
}

// addrOf reads a handle's local address, or its peer's, for its transport.
func addrOf(transport string, l *uvcgo.Loop, h uvcgo.Handle, peer bool) (net.Addr, error) {
	switch transport {
	case "unix":
		return unixAddrOf(l, h, peer)
	case "tcp":
		return tcpAddrOf(l, h, peer)
	}
	return nil, fmt.Errorf("uv: a %s has no address: %w", transport, errInvalid)
}

// dialUV starts connecting c to ep on the libuv driver: a handle of ep's
// transport whose connect completes op.
func dialUV(r *reactor.Reactor, ep endpoint, c *IO, op *ioOp) error {
	s := newUVStream(r, ep.transport)
	s.setNetwork(ep.network)
	c.e = &s.ioEvent
	if err := newCore(r, &s.core, s, 0, func(l *uvcgo.Loop, id uint64) (uvcgo.Handle, error) {
		h, err := ep.newHandle(l, id)
		if err != nil {
			return 0, err
		}
		if err := ep.connect(l, h); err != nil {
			l.CloseHandle(h)
			return 0, sysError("connect", err)
		}
		s.conn = op
		eventkind.ActiveDelta(r.Owner(), 1)
		return h, nil
	}); err != nil {
		return err
	}
	s.ref = weak.Make(c)
	track(c, &c.handle, &s.core)
	return nil
}
