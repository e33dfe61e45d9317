package uv

import (
	"errors"
	"net"
	"strconv"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
)

// udpOptions is what the kernel reports of a UDP socket's options.
type udpOptions struct {
	Broadcast, TTL, MulticastTTL, MulticastLoop int
	MulticastIF                                 string // IPv4: the interface's address; IPv6: its index
}

// udpOptionsOf reads u's options from its socket.
func udpOptionsOf(t *testing.T, u *UDP) udpOptions {
	t.Helper()
	fd := -1
	UvtMust(t, u.e.r.Call(func() {
		switch e := u.Target().(type) {
		case *goUDP:
			fd = e.fd
		case *udpEvent:
			fd, _ = e.loop.Fileno(e.h)
		}
	}))
	get := func(level, opt int) int {
		v, err := unix.GetsockoptInt(fd, level, opt)
		UvtMust(t, err)
		return v
	}
	o := udpOptions{Broadcast: get(unix.SOL_SOCKET, unix.SO_BROADCAST)}
	if u.e.v6() {
		o.TTL = get(unix.IPPROTO_IPV6, unix.IPV6_UNICAST_HOPS)
		o.MulticastTTL = get(unix.IPPROTO_IPV6, unix.IPV6_MULTICAST_HOPS)
		o.MulticastLoop = get(unix.IPPROTO_IPV6, unix.IPV6_MULTICAST_LOOP)
		o.MulticastIF = "if" + strconv.Itoa(get(unix.IPPROTO_IPV6, unix.IPV6_MULTICAST_IF))
		return o
	}
	o.TTL = get(unix.IPPROTO_IP, unix.IP_TTL)
	o.MulticastTTL = get(unix.IPPROTO_IP, unix.IP_MULTICAST_TTL)
	o.MulticastLoop = get(unix.IPPROTO_IP, unix.IP_MULTICAST_LOOP)
	a, err := unix.GetsockoptInet4Addr(fd, unix.IPPROTO_IP, unix.IP_MULTICAST_IF)
	UvtMust(t, err)
	o.MulticastIF = net.IP(a[:]).String()
	return o
}

// TestUDPOptions: broadcast (a send to a broadcast address is refused with
// EACCES until SetBroadcast), TTL and the multicast options are set on the
// socket as libuv sets them, on both drivers and both families, and read
// back from it; values out of libuv's ranges are refused with EINVAL, as
// are groups that are not multicast addresses of the socket's family.
func TestUDPOptions(t *testing.T) {
	lo, err := net.InterfaceByName("lo")
	UvtMust(t, err)
	for _, network := range []string{"udp4", "udp6"} {
		t.Run(network, func(t *testing.T) {
			conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
				u := UvtNewReactorOn(t, d)
				addr, wantIF, group := "127.0.0.1:0", "127.0.0.1", net.ParseIP("224.0.0.1")
				if network == "udp6" {
					addr, wantIF, group = "[::1]:0", "if"+strconv.Itoa(lo.Index), net.ParseIP("ff02::1")
				}
				x, err := ListenUDP(u.Reactor, network, addr)
				UvtMust(t, err)
				before := udpOptionsOf(t, x)
				if before.Broadcast != 0 || before.MulticastLoop != 1 || before.MulticastTTL != 1 {
					t.Errorf("a new socket's options: %+v", before)
				}
				bcast := &net.UDPAddr{IP: net.ParseIP("127.255.255.255"), Port: 9} // loopback's broadcast route
				if network == "udp4" {
					if _, err := x.WriteTo([]byte("x"), bcast); !errors.Is(err, syscall.EACCES) {
						t.Errorf("a broadcast before SetBroadcast = %v, want EACCES", err)
					}
				}
				UvtMust(t, x.SetBroadcast(true))
				if network == "udp4" {
					if _, err := x.WriteTo([]byte("x"), bcast); err != nil {
						t.Errorf("a broadcast after SetBroadcast(true) = %v", err)
					}
				}
				UvtMust(t, x.SetTTL(7))
				UvtMust(t, x.SetMulticastTTL(0))
				UvtMust(t, x.SetMulticastLoopback(false))
				UvtMust(t, x.SetMulticastInterface(lo))
				want := udpOptions{Broadcast: 1, TTL: 7, MulticastTTL: 0, MulticastLoop: 0, MulticastIF: wantIF}
				if diff := cmp.Diff(want, udpOptionsOf(t, x)); diff != "" {
					t.Errorf("options (-want +got):\n%s", diff)
				}
				UvtMust(t, x.SetBroadcast(false))
				UvtMust(t, x.SetMulticastTTL(255))
				UvtMust(t, x.SetMulticastLoopback(true))
				want = udpOptions{Broadcast: 0, TTL: 7, MulticastTTL: 255, MulticastLoop: 1, MulticastIF: wantIF}
				if diff := cmp.Diff(want, udpOptionsOf(t, x)); diff != "" {
					t.Errorf("options switched back (-want +got):\n%s", diff)
				}
				other := net.ParseIP("ff02::1")
				if network == "udp6" {
					other = net.ParseIP("224.0.0.1")
				}
				for name, err := range map[string]error{
					"SetTTL(0)":                           x.SetTTL(0),
					"SetTTL(256)":                         x.SetTTL(256),
					"SetMulticastTTL(-1)":                 x.SetMulticastTTL(-1),
					"SetMulticastTTL(256)":                x.SetMulticastTTL(256),
					"JoinGroup(unicast)":                  x.JoinGroup(nil, net.ParseIP("127.0.0.1")),
					"JoinGroup(nil)":                      x.JoinGroup(nil, nil),
					"JoinGroup(other family)":             x.JoinGroup(nil, other),
					"JoinSourceSpecificGroup(nil source)": x.JoinSourceSpecificGroup(nil, group, nil),
				} {
					if !errors.Is(err, syscall.EINVAL) {
						t.Errorf("%s = %v, want EINVAL", name, err)
					}
				}
				x.Close()
				if err := x.SetTTL(9); !errors.Is(err, ErrClosed) {
					t.Errorf("SetTTL after Close = %v, want ErrClosed", err)
				}
				UvtShutdown(t, u, false)
			})
		})
	}
}
