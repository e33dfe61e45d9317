package uv

import (
	"fmt"
	"net"
	"strconv"
	"sync"
	"syscall"
	"time"
	"unsafe"

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
	if host, _, err := net.SplitHostPort(address); err == nil {
		if err := hostError(host); err != nil {
			return tcpTarget{}, err // never sent to the resolver
		}
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
	return &net.TCPAddr{IP: net.IP(ip), Port: port, Zone: zoneName(zone)}
}

// zones names interfaces by index for zoneName, read again when a name is
// asked more than a minute after the last reading, as package net's own
// cache is.
var zones struct {
	sync.Mutex
	names map[uint32]string
	read  time.Time
}

// zoneName is an IPv6 zone as package net gives it in an address: the
// interface's name ("eth0"), or its index when no interface has it ("" for
// none).
func zoneName(zone uint32) string {
	if zone == 0 {
		return ""
	}
	zones.Lock()
	defer zones.Unlock()
	if zones.read.IsZero() || time.Since(zones.read) > time.Minute {
		// A reading that fails leaves the names as they were until the
		// next minute: this runs on the loop, once per address made.
		zones.read = time.Now()
		if ifs, err := net.Interfaces(); err == nil {
			zones.names = make(map[uint32]string, len(ifs))
			for _, i := range ifs {
				zones.names[uint32(i.Index)] = i.Name
			}
		}
	}
	if name, ok := zones.names[zone]; ok {
		return name
	}
	return strconv.FormatUint(uint64(zone), 10)
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

// SetKeepAlive turns TCP keep-alive probes on or off, leaving their idle
// delay, interval and count as they are (the system's defaults, 7200 s,
// 75 s and 9 on Linux, until SetKeepAliveConfig sets them). A connection,
// dialled or accepted, has keep-alive off until asked, as in libuv (package
// net turns it on with 15 s).
func (c *IO) SetKeepAlive(on bool) error {
	return c.SetKeepAliveConfig(net.KeepAliveConfig{Enable: on, Idle: -1, Interval: -1, Count: -1})
}

// SetKeepAliveConfig sets TCP keep-alive as net.TCPConn's does: Enable turns
// the probes on or off (SO_KEEPALIVE), Idle is the idle time before the
// first probe (TCP_KEEPIDLE), Interval the time between probes
// (TCP_KEEPINTVL), Count the probes left unanswered before the connection
// is dropped (TCP_KEEPCNT). Durations are rounded up to whole seconds; a
// zero field takes net's default (15 s, 15 s, 9), a negative one leaves
// the option as it is. On the libuv driver uv_tcp_keepalive turns the
// probes on with the delay, and libuv 1.44 sets an interval of 1 s and a
// count of 10 of its own with it: the socket's own are read first, and the
// interval and count asked for (or those it had) are set after the call.
// A value the system refuses (Linux takes 1 to 32767 s, and 1 to 127
// probes) is its error (EINVAL), and, as with net.TCPConn, the options set
// before it stay set and the rest stay as they were (Enable, then Idle,
// Interval and Count, in that order), the same on both drivers. An IO that
// is not TCP refuses with EINVAL.
func (c *IO) SetKeepAliveConfig(cfg net.KeepAliveConfig) error {
	if c.zero() {
		return errZero("IO")
	}
	e := c.e
	if e.transport != "tcp" {
		return fmt.Errorf("uv: SetKeepAliveConfig on a %s IO: %w", e.transport, errInvalid)
	}
	return e.do(func() error { return e.t.keepAlive(cfg) })
}

// Package net's keep-alive defaults, taken for a zero field.
const (
	keepAliveIdle     = 15 * time.Second
	keepAliveInterval = 15 * time.Second
	keepAliveCount    = 9
)

// keepAliveSeconds is a keep-alive duration as the socket option takes it:
// d rounded up to whole seconds, def for zero; set is false for a negative
// d (the option is left alone).
func keepAliveSeconds(d, def time.Duration) (secs int, set bool) {
	if d < 0 {
		return 0, false
	}
	if d == 0 {
		d = def
	}
	return int((d + time.Second - 1) / time.Second), true
}

// setNoDelay sets a TCP socket's TCP_NODELAY: the pure-Go driver's
// connections, and the libuv driver's while unopened in libuv.
func setNoDelay(fd int, on bool) error {
	v := 0
	if on {
		v = 1
	}
	return errnoError("setsockopt TCP_NODELAY", unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, v))
}

// setKeepAlive turns a TCP socket's keep-alive probes on or off, with the
// options of cfg: the pure-Go driver's connections, and the libuv driver's
// while unopened in libuv.
func setKeepAlive(fd int, cfg net.KeepAliveConfig) error {
	v := 0
	if cfg.Enable {
		v = 1
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_KEEPALIVE, v); err != nil {
		return errnoError("setsockopt SO_KEEPALIVE", err)
	}
	return setKeepAliveOptions(fd, cfg, true)
}

// setKeepAliveOptions sets the keep-alive options of cfg on a TCP socket
// other than SO_KEEPALIVE: the idle delay (with idle set), the interval and
// the count.
func setKeepAliveOptions(fd int, cfg net.KeepAliveConfig, idle bool) error {
	if secs, set := keepAliveSeconds(cfg.Idle, keepAliveIdle); idle && set {
		if err := unix.SetsockoptInt(fd, unix.IPPROTO_TCP, tcpKeepIdle, secs); err != nil {
			return errnoError("setsockopt TCP_KEEPIDLE", err)
		}
	}
	if secs, set := keepAliveSeconds(cfg.Interval, keepAliveInterval); set {
		if err := unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_KEEPINTVL, secs); err != nil {
			return errnoError("setsockopt TCP_KEEPINTVL", err)
		}
	}
	if n := cfg.Count; n >= 0 {
		if n == 0 {
			n = keepAliveCount
		}
		if err := unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_KEEPCNT, n); err != nil {
			return errnoError("setsockopt TCP_KEEPCNT", err)
		}
	}
	return nil
}

// peerName reads a TCP socket's peer address with getsockopt(SO_PEERNAME),
// which, unlike getpeername(2), still answers once the peer has reset the
// connection: the address accept(2) gave, as package net keeps it. Nil when
// it cannot be read.
func peerName(fd int) net.Addr {
	var rsa unix.RawSockaddrAny
	// The kernel refuses a buffer longer than the address (EINVAL) and
	// cuts the address to a shorter one: an IPv4 address's size first,
	// then, for IPv6, an IPv6 one's.
	get := func(n uint32) bool {
		return getsockoptPeerName(fd, &rsa, &n) == nil
	}
	if !get(unix.SizeofSockaddrInet4) || rsa.Addr.Family == unix.AF_INET6 && !get(unix.SizeofSockaddrInet6) {
		return nil
	}
	return rawTCPAddr(&rsa)
}

// tcpAddrPair is an accepted TCP connection's two addresses in one
// allocation, as its addrCache holds them: the pair the cache gives out
// (local, then the peer's), the two *net.TCPAddr it holds, and their IPs'
// bytes. (Package net makes two allocations for each address, the
// sockaddr and the TCPAddr; this was seven for the two.)
type tcpAddrPair struct {
	pair [2]net.Addr
	tcp  [2]net.TCPAddr
	ip   [2][16]byte
}

// The pair's places.
const (
	pairLocal  = 0
	pairRemote = 1
)

// setIP makes the pair's address i of ip (4 or 16 bytes), port and IPv6
// zone. The IP is a slice of the pair's own bytes, full to its capacity: an
// append to it copies them.
func (p *tcpAddrPair) setIP(i int, ip []byte, port int, zone uint32) {
	n := copy(p.ip[i][:], ip)
	p.tcp[i] = net.TCPAddr{IP: p.ip[i][:n:n], Port: port, Zone: zoneName(zone)}
	p.pair[i] = &p.tcp[i]
}

// setRaw makes the pair's address i of rsa, an Internet address; false
// for another family.
func (p *tcpAddrPair) setRaw(i int, rsa *unix.RawSockaddrAny) bool {
	switch rsa.Addr.Family {
	case unix.AF_INET:
		a := (*unix.RawSockaddrInet4)(unsafe.Pointer(rsa))
		p.setIP(i, a.Addr[:], netPort(&a.Port), 0)
	case unix.AF_INET6:
		a := (*unix.RawSockaddrInet6)(unsafe.Pointer(rsa))
		p.setIP(i, a.Addr[:], netPort(&a.Port), a.Scope_id)
	default:
		return false
	}
	return true
}

// readLocal reads an accepted socket's local address into the pair with
// getsockname(2), into a raw address on the stack (package syscall's
// Getsockname allocates one); where that call is not made (not Linux), as
// socketAddr reads it. False when it cannot be read.
func (p *tcpAddrPair) readLocal(fd int) bool {
	var rsa unix.RawSockaddrAny
	if err := getsockname(fd, &rsa); err != nil {
		if err != syscall.ENOSYS {
			return false
		}
		p.pair[pairLocal] = socketAddr(fd, false)
		return p.pair[pairLocal] != nil
	}
	return p.setRaw(pairLocal, &rsa)
}

// rawTCPAddr is rsa's address, an Internet one (nil for another family).
func rawTCPAddr(rsa *unix.RawSockaddrAny) net.Addr {
	switch rsa.Addr.Family {
	case unix.AF_INET:
		a := (*unix.RawSockaddrInet4)(unsafe.Pointer(rsa))
		return tcpAddr(append([]byte(nil), a.Addr[:]...), netPort(&a.Port), 0)
	case unix.AF_INET6:
		a := (*unix.RawSockaddrInet6)(unsafe.Pointer(rsa))
		return tcpAddr(append([]byte(nil), a.Addr[:]...), netPort(&a.Port), a.Scope_id)
	}
	return nil
}

// netPort reads a port kept in network byte order.
func netPort(p *uint16) int {
	b := (*[2]byte)(unsafe.Pointer(p))
	return int(b[0])<<8 | int(b[1])
}
