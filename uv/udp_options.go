package uv

import (
	"fmt"
	"net"
	"syscall"
)

// This file holds a UDP socket's options: broadcast, TTL and multicast
// (libuv's uv_udp_set_*). Each driver sets them its own way: udpEvent.option
// (udp_uv.go) through libuv, goUDP.option (udp_go.go) on the socket.

// udpOptionKind names an option.
type udpOptionKind int

const (
	optBroadcast     udpOptionKind = iota + 1 // SO_BROADCAST
	optTTL                                    // IP_TTL, IPV6_UNICAST_HOPS
	optMulticastTTL                           // IP_MULTICAST_TTL, IPV6_MULTICAST_HOPS
	optMulticastLoop                          // IP_MULTICAST_LOOP, IPV6_MULTICAST_LOOP
	optMulticastIF                            // IP_MULTICAST_IF, IPV6_MULTICAST_IF
	optMembership                             // join or leave a group, from any source or one
)

// udpOption is one option to set, checked: v is a value or a switch (0 or
// 1), ifi an interface (nil: the system's choice), group and source
// addresses of the socket's family (source nil: any), v6 the family.
type udpOption struct {
	kind          udpOptionKind
	v             int
	ifi           *net.Interface
	group, source net.IP
	join, v6      bool
}

// SetBroadcast allows (or forbids again) sending to a broadcast address
// (SO_BROADCAST, uv_udp_set_broadcast); without it such a send fails with
// EACCES.
func (u *UDP) SetBroadcast(on bool) error {
	return u.setOption("set broadcast", udpOption{kind: optBroadcast, v: b2i(on)})
}

// SetTTL sets the time to live (the IPv6 hop limit) of the unicast
// datagrams sent: 1 to 255, as libuv's uv_udp_set_ttl takes it; anything
// else is refused with EINVAL.
func (u *UDP) SetTTL(ttl int) error {
	if ttl < 1 || ttl > 255 {
		return u.opError("set ttl", fmt.Errorf("uv: SetTTL(%d): %w", ttl, errInvalid))
	}
	return u.setOption("set ttl", udpOption{kind: optTTL, v: ttl})
}

// SetMulticastTTL sets the time to live (hop limit) of the multicast
// datagrams sent: 0 to 255 (the default 1 keeps them on the local
// network; 0 on this host); anything else is refused with EINVAL.
func (u *UDP) SetMulticastTTL(ttl int) error {
	if ttl < 0 || ttl > 255 {
		return u.opError("set multicast ttl", fmt.Errorf("uv: SetMulticastTTL(%d): %w", ttl, errInvalid))
	}
	return u.setOption("set multicast ttl", udpOption{kind: optMulticastTTL, v: ttl})
}

// SetMulticastLoopback says whether the multicast datagrams sent are also
// delivered to the sockets of this host that joined the group (on by
// default).
func (u *UDP) SetMulticastLoopback(on bool) error {
	return u.setOption("set multicast loopback", udpOption{kind: optMulticastLoop, v: b2i(on)})
}

// SetMulticastInterface sends the multicast datagrams out of ifi (nil: the
// interface the routing table picks). An IPv4 socket names the interface
// by its first IPv4 address, as libuv does, so an interface without one is
// refused with EADDRNOTAVAIL, on both drivers and by every method that
// takes an interface.
func (u *UDP) SetMulticastInterface(ifi *net.Interface) error {
	return u.setOption("set multicast interface", udpOption{kind: optMulticastIF, ifi: ifi})
}

// JoinGroup joins the multicast group on ifi (nil: the interface the
// system picks), so that datagrams sent to the group and the socket's port
// arrive. group must be a multicast address of the socket's family
// (EINVAL otherwise); joining a group twice fails with EADDRINUSE. On an
// IPv4 socket, an ifi without an IPv4 address is refused with
// EADDRNOTAVAIL (see SetMulticastInterface).
func (u *UDP) JoinGroup(ifi *net.Interface, group net.IP) error {
	return u.membership("join group", ifi, group, nil, true)
}

// LeaveGroup leaves a group joined with JoinGroup; leaving one not joined
// fails (EADDRNOTAVAIL).
func (u *UDP) LeaveGroup(ifi *net.Interface, group net.IP) error {
	return u.membership("leave group", ifi, group, nil, false)
}

// JoinSourceSpecificGroup joins the multicast group on ifi for the
// datagrams source sends only (source-specific multicast, RFC 4607;
// uv_udp_set_source_membership). Joining several sources of one group
// adds each.
func (u *UDP) JoinSourceSpecificGroup(ifi *net.Interface, group, source net.IP) error {
	if source == nil {
		return u.opError("join source-specific group", fmt.Errorf("uv: nil source: %w", errInvalid))
	}
	return u.membership("join source-specific group", ifi, group, source, true)
}

// LeaveSourceSpecificGroup stops receiving the group's datagrams from
// source.
func (u *UDP) LeaveSourceSpecificGroup(ifi *net.Interface, group, source net.IP) error {
	if source == nil {
		return u.opError("leave source-specific group", fmt.Errorf("uv: nil source: %w", errInvalid))
	}
	return u.membership("leave source-specific group", ifi, group, source, false)
}

// membership checks a group (and source) against the socket's family and
// joins or leaves it.
func (u *UDP) membership(op string, ifi *net.Interface, group, source net.IP, join bool) error {
	if u == nil || u.e == nil {
		return errZero("UDP")
	}
	o := udpOption{kind: optMembership, ifi: ifi, join: join, v6: u.e.v6()}
	var err error
	if o.group, err = o.address("group", group); err == nil && source != nil {
		o.source, err = o.address("source", source)
	}
	if err == nil && !o.group.IsMulticast() {
		err = fmt.Errorf("uv: group %s is not a multicast address: %w", group, errInvalid)
	}
	if err != nil {
		return u.opError(op, err)
	}
	return u.setOption(op, o)
}

// address is ip in the form of the socket's family: 4 bytes for IPv4, 16
// for IPv6; one of the other family, or none, is EINVAL.
func (o udpOption) address(what string, ip net.IP) (net.IP, error) {
	if v4 := ip.To4(); v4 != nil && !o.v6 {
		return v4, nil
	}
	if ip.To4() == nil && len(ip) == net.IPv6len && o.v6 {
		return ip, nil
	}
	return nil, fmt.Errorf("uv: %s %v for an IPv%d socket: %w", what, ip, map[bool]int{false: 4, true: 6}[o.v6], errInvalid)
}

// setOption sets o on the loop.
func (u *UDP) setOption(op string, o udpOption) error {
	if u == nil || u.e == nil {
		return errZero("UDP")
	}
	e := u.e
	o.v6 = e.v6()
	err := ErrClosed
	if x := e.r.Call(func() {
		if !e.closed {
			err = e.drv.option(o)
		}
	}); x != nil {
		err = ErrClosed
	}
	if err != nil {
		return u.opError(op, err)
	}
	return nil
}

// v6 reports an IPv6 socket.
func (s *udpState) v6() bool { return s.addr != nil && s.addr.IP.To4() == nil }

// ifAddr4 is the first IPv4 address of ifi, which names it to libuv on an
// IPv4 socket.
func ifAddr4(ifi *net.Interface) (string, error) {
	addrs, err := ifi.Addrs()
	if err != nil {
		return "", err
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil {
			return n.IP.String(), nil
		}
	}
	return "", fmt.Errorf("uv: interface %s has no IPv4 address: %w", ifi.Name, syscall.EADDRNOTAVAIL)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
