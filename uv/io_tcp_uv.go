package uv

import (
	"net"

	uvcgo "github.com/uvevent/uvevent/internal/cgo"
)

// This file is the TCP transport's libuv half (uv_tcp_t): the calls a
// "tcp" endpoint makes and a TCP handle's addresses.

// tcpCalls are a TCP target's calls on the libuv driver.
func tcpCalls(t tcpTarget) uvCalls {
	return uvCalls{
		newHandle: func(l *uvcgo.Loop, id uint64, listener bool) (uvcgo.Handle, error) {
			family := 0
			if listener { // the socket now, so that options can be set before bind
				family = t.family
			}
			return l.NewTCP(id, family, listener)
		},
		bind: func(l *uvcgo.Loop, h uvcgo.Handle) error { return l.BindTCP(h, t.ip, t.port, t.zone, t.v6only) },
		connect: func(l *uvcgo.Loop, h uvcgo.Handle) error {
			return l.ConnectTCP(h, t.ip, t.port, t.zone)
		},
	}
}

// tcpAddrOf reads a TCP handle's local address, or its peer's.
func tcpAddrOf(l *uvcgo.Loop, h uvcgo.Handle, peer bool) (net.Addr, error) {
	ip, port, zone, err := l.TCPAddr(h, peer)
	if err != nil {
		return nil, err
	}
	return tcpAddr(ip, port, zone), nil
}
