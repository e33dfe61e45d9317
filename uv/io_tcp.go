package uv

import (
	"net"
	"strconv"

	"golang.org/x/sys/unix"
)

// This file holds what only TCP has: its addresses and socket options.
// Its libuv half is io_tcp_uv.go.

// tcpTarget resolves a TCP address for libuv: the IP as 4 or 16 bytes.
type tcpTarget struct {
	ip     []byte
	port   int
	zone   uint32
	family int // AF_INET or AF_INET6
	v6only bool
}

// resolveTCP resolves address for network ("tcp", "tcp4" or "tcp6") with
// net.ResolveTCPAddr: a host name is looked up on the calling goroutine. An
// empty host means every local address: IPv4's for "tcp" and "tcp4",
// IPv6's for "tcp6".
func resolveTCP(network, address string) (tcpTarget, error) {
	switch network {
	case "tcp", "tcp4", "tcp6":
	default:
		return tcpTarget{}, net.UnknownNetworkError(network)
	}
	a, err := net.ResolveTCPAddr(network, address)
	if err != nil {
		return tcpTarget{}, err
	}
	t := tcpTarget{port: a.Port}
	ip := a.IP
	if ip == nil {
		ip = net.IPv4zero
		if network == "tcp6" {
			ip = net.IPv6unspecified
		}
	}
	if v4 := ip.To4(); v4 != nil && network != "tcp6" {
		t.ip, t.family = v4, afInet
	} else {
		t.ip, t.family, t.v6only = ip.To16(), afInet6, network == "tcp6"
		t.zone = zoneIndex(a.Zone)
	}
	return t, nil
}

const (
	afInet  = unix.AF_INET
	afInet6 = unix.AF_INET6
)

// zoneIndex is the interface index an IPv6 zone names (0 for none).
func zoneIndex(zone string) uint32 {
	if zone == "" {
		return 0
	}
	if i, err := net.InterfaceByName(zone); err == nil {
		return uint32(i.Index)
	}
	n, _ := strconv.Atoi(zone)
	return uint32(n)
}

// tcpAddr makes a *net.TCPAddr of libuv's answer.
func tcpAddr(ip []byte, port int, zone uint32) *net.TCPAddr {
	a := &net.TCPAddr{IP: net.IP(ip), Port: port}
	if zone != 0 {
		a.Zone = strconv.Itoa(int(zone))
	}
	return a
}

// tcpEndpoint is a TCP address as an endpoint to listen on or dial.
func tcpEndpoint(network, address string) (endpoint, error) {
	t, err := resolveTCP(network, address)
	if err != nil {
		return endpoint{}, err
	}
	sa, err := t.sockaddr()
	if err != nil {
		return endpoint{}, err
	}
	return endpoint{
		transport: "tcp",
		addr:      &net.TCPAddr{IP: net.IP(t.ip), Port: t.port},
		family:    t.family,
		sa:        sa,
		v6only:    t.v6only,
		uvCalls:   tcpCalls(t),
	}, nil
}

// sockaddr is the target as a socket address: an IPv4 one for 4 bytes of
// address, an IPv6 one for 16; anything else is EINVAL, as libuv refuses
// it.
func (t tcpTarget) sockaddr() (unix.Sockaddr, error) {
	switch len(t.ip) {
	case 4:
		sa := &unix.SockaddrInet4{Port: t.port}
		copy(sa.Addr[:], t.ip)
		return sa, nil
	case 16:
		sa := &unix.SockaddrInet6{Port: t.port, ZoneId: t.zone}
		copy(sa.Addr[:], t.ip)
		return sa, nil
	}
	return nil, errInvalid
}

// SetNoDelay turns Nagle's algorithm off (true: the default for every TCP
// connection dialled or accepted, as in package net) or on (false: small
// writes wait to be coalesced while data is unacknowledged).
func (c *IO) SetNoDelay(on bool) error {
	if c.zero() {
		return errZero("IO")
	}
	e := c.e
	return e.do(func() error { return e.t.noDelay(on) })
}
