package uv

import (
	"errors"
	"net"
	"strconv"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
	"golang.org/x/sys/unix"
)

// TestUDPReceivesInBatches: a UDP reads its datagrams in batches: libuv's
// handle uses recvmmsg (UV_UDP_RECVMMSG), and on the pure-Go driver one
// recvmmsg takes all the datagrams waiting, up to udpBatch.
func TestUDPReceivesInBatches(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		u := UvtNewReactorOn(t, d)
		a, err := ListenUDP(u.Reactor, "udp4", "127.0.0.1:0")
		UvtMust(t, err)
		b, err := ListenUDP(u.Reactor, "udp4", "127.0.0.1:0")
		UvtMust(t, err)
		for range udpBatch + 5 {
			_, err := a.WriteTo([]byte("x"), b.LocalAddr())
			UvtMust(t, err)
		}
		UvtMust(t, u.Call(func() {
			switch e := b.Target().(type) {
			case *udpEvent:
				if !e.loop.UDPBatched(e.h) {
					t.Error("the libuv handle does not use recvmmsg")
				}
			case *goUDP:
				bufs := udpBatches.Get().(*udpBatchBufs)
				defer udpBatches.Put(bufs)
				if got, err := bufs.recv(e.fd, udpBatch); got != udpBatch || err != nil {
					t.Errorf("one recvmmsg = %d, %v; want %d", got, err, udpBatch)
				}
				if d := bufs.datagram(udpBatch-1, &e.udpState); string(d.Data) != "x" || d.Addr.String() != a.LocalAddr().String() {
					t.Errorf("the last datagram = %q from %v", d.Data, d.Addr)
				}
			}
		}))
		a.Close()
		b.Close()
		UvtShutdown(t, u, false)
	})
}

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

// UvtUDPBatch is the most datagrams one batched receive reads.
const UvtUDPBatch = udpBatch

// UvtUDPs returns how many UDP sockets u has (made and not yet freed), on
// either driver: Stats counts the pure-Go driver's sockets too.
func UvtUDPs(u *UvtReactor) int { return u.Stats().Handles["udp"] }

// On the pure-Go driver, a datagram sent while others are queued goes
// behind them; the queue goes out, in order, once the socket is writable;
// a queued datagram that fails is reported by the next WriteTo. (The
// socket of a loopback UDP never makes a sender wait: the queue is primed
// by hand.)
func TestGoUDPQueue(t *testing.T) {
	u := UvtNewReactorOn(t, reactor.DriverGo)
	a, err := ListenUDP(u.Reactor, "udp4", "127.0.0.1:0")
	UvtMust(t, err)
	b, err := ListenUDP(u.Reactor, "udp4", "127.0.0.1:0")
	UvtMust(t, err)
	e := a.Target().(*goUDP)
	to, err := unix.Getsockname(b.Target().(*goUDP).fd)
	UvtMust(t, err)
	var queued int
	u.Call(func() { // in one go: a pass would send the queue
		e.queue = append(e.queue,
			goDatagram{[]byte("first"), to},
			goDatagram{[]byte("bad"), &unix.SockaddrInet6{Port: 9}}, // not for an IPv4 socket
		)
		_, err = a.WriteTo([]byte("second"), b.LocalAddr())
		queued = a.Queued()
	})
	if err != nil || queued != 3 {
		t.Fatalf("WriteTo behind a queue of 2 = %v, Queued %d; want nil, 3", err, queued)
	}
	UvtTurnUntil(t, u, "the queue sent", func() bool { return a.Queued() == 0 })
	stop := UvtServe(t, u)
	buf := make([]byte, 10)
	for _, want := range []string{"first", "second"} {
		n, _, err := b.ReadFrom(buf)
		if err != nil || string(buf[:n]) != want {
			t.Fatalf("ReadFrom = %q, %v; want %q", buf[:n], err, want)
		}
	}
	if _, err := a.WriteTo([]byte("x"), b.LocalAddr()); !errors.Is(err, syscall.EAFNOSUPPORT) {
		t.Errorf("WriteTo after a queued send failed = %v, want its EAFNOSUPPORT", err)
	}
	if _, err := a.WriteTo([]byte("x"), b.LocalAddr()); err != nil {
		t.Errorf("the WriteTo after = %v", err)
	}
	var mask uint32
	u.Call(func() { mask = e.mask })
	if mask != 0 {
		t.Errorf("polled for %#x with nothing queued or received, want nothing", mask)
	}
	a.Close()
	b.Close()
	stop()
	UvtShutdown(t, u, false)
}

// TestUDPPassReadsFullBatches: on the pure-Go driver, a pass over a socket
// that stays full reads full batches, as libuv's uv__udp_recvmsg does,
// until it has read udpBurst: two batches of udpBatch (40 datagrams), not
// udpBurst (32) with a last batch cut short, which cost a recvmmsg and an
// epoll_wait more per 32 datagrams than libuv's pass of 40. What is left
// waits for the next pass, in order.
func TestUDPPassReadsFullBatches(t *testing.T) {
	const sent = 3 * udpBatch
	u := UvtNewReactorOn(t, reactor.DriverGo)
	a, err := ListenUDP(u.Reactor, "udp4", "127.0.0.1:0")
	UvtMust(t, err)
	b, err := ListenUDP(u.Reactor, "udp4", "127.0.0.1:0")
	UvtMust(t, err)
	for i := range sent {
		_, err := a.WriteTo([]byte(strconv.Itoa(i)), b.LocalAddr())
		UvtMust(t, err)
	}
	var got []string
	UvtMust(t, u.Call(func() {
		if _, err := event.Subscribe(b, func(_ event.Event, res any, _ error) {
			if dg, ok := res.(*Datagram); ok {
				got = append(got, string(dg.Data))
			}
		}); err != nil {
			t.Error(err)
			return
		}
		if err := b.Start(); err != nil {
			t.Error(err)
			return
		}
		b.Target().(*goUDP).receiveBurst() // one pass, as one readiness gets
	}))
	want := 2 * udpBatch
	if len(got) != want {
		t.Errorf("one pass read %d datagrams of %d waiting, want %d (two full batches)", len(got), sent, want)
	}
	UvtTurnUntil(t, u, "the rest read", func() bool { return len(got) >= sent })
	var order []string
	for i := range sent {
		order = append(order, strconv.Itoa(i))
	}
	if diff := cmp.Diff(order, got); diff != "" {
		t.Errorf("datagrams (-want +got):\n%s", diff)
	}
	a.Close()
	b.Close()
	UvtShutdown(t, u, false)
}
