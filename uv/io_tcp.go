package uv

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"weak"

	"golang.org/x/sys/unix"

	uvcgo "github.com/uvevent/uvevent/cgo"
	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
)

// This file holds what only TCP IOs have: dialling, addresses and socket
// options.

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
		if a.Zone != "" {
			if i, err := net.InterfaceByName(a.Zone); err == nil {
				t.zone = uint32(i.Index)
			} else if n, err := strconv.Atoi(a.Zone); err == nil {
				t.zone = uint32(n)
			}
		}
	}
	return t, nil
}

const (
	afInet  = unix.AF_INET
	afInet6 = unix.AF_INET6
)

// tcpAddr makes a *net.TCPAddr of libuv's answer.
func tcpAddr(ip []byte, port int, zone uint32) *net.TCPAddr {
	a := &net.TCPAddr{IP: net.IP(ip), Port: port}
	if zone != 0 {
		a.Zone = strconv.Itoa(int(zone))
	}
	return a
}

// addresses reads the local and peer addresses of the handle. On the loop.
func (e *ioEvent) addresses() (local, remote net.Addr) {
	if ip, port, zone, err := e.loop.TCPAddr(e.h, false); err == nil {
		local = tcpAddr(ip, port, zone)
	}
	if ip, port, zone, err := e.loop.TCPAddr(e.h, true); err == nil {
		remote = tcpAddr(ip, port, zone)
	}
	return local, remote
}

// DialAsync starts connecting to address over network ("tcp", "tcp4",
// "tcp6") and returns a request that completes with the connected *IO, or
// the error (ECONNREFUSED, ...). A host name is resolved on the calling
// goroutine (net.ResolveTCPAddr); give an IP to keep that off a loop
// goroutine.
func DialAsync(r *reactor.Reactor, network, address string) (*event.Future, error) {
	t, err := resolveTCP(network, address)
	if err != nil {
		return nil, &net.OpError{Op: "dial", Net: network, Err: err}
	}
	if r == nil {
		return nil, fmt.Errorf("uv: nil reactor: %w", errInvalid)
	}
	e := &ioEvent{transport: "tcp"}
	c := &IO{e: e}
	f := event.NewFuture(r)
	op := &ioOp{fut: f, res: func(*ioOp) any { return c }}
	if err := newCore(r, &e.core, e, 0, func(l *uvcgo.Loop, id uint64) (uvcgo.Handle, error) {
		h, err := l.NewTCP(id, 0, false)
		if err != nil {
			return 0, err
		}
		if err := l.ConnectTCP(h, t.ip, t.port, t.zone); err != nil {
			l.CloseHandle(h)
			return 0, err
		}
		e.conn = op
		r.ActiveDelta(1)
		return h, nil
	}); err != nil {
		return nil, &net.OpError{Op: "dial", Net: network, Err: err}
	}
	e.ref = weak.Make(c)
	track(c, &c.Handle, &e.core)
	return f, nil
}

// Dial connects to address over network and returns the connection once
// connected, or ctx's error (the connection attempt is then closed).
func Dial(ctx context.Context, r *reactor.Reactor, network, address string) (*IO, error) {
	f, err := DialAsync(r, network, address)
	if err != nil {
		return nil, err
	}
	res, err := awaitOne(ctx, f)
	if err != nil {
		if ctx.Err() != nil {
			// The connect is abandoned: whenever it completes, its IO is
			// closed.
			closeIO := func(_ event.Event, res any, _ error) {
				if c, ok := res.(*IO); ok {
					c.Close()
				}
			}
			if _, err := event.Subscribe(f, closeIO); err != nil {
				res, err, _ := f.Outcome()
				closeIO(nil, res, err)
			}
		}
		return nil, &net.OpError{Op: "dial", Net: network, Err: err}
	}
	return res.(*IO), nil
}

// SetNoDelay turns Nagle's algorithm off (true, the default, as in package
// net) or on.
func (c *IO) SetNoDelay(on bool) error {
	e := c.e
	return e.do(func() error { return e.loop.TCPNoDelay(e.h, on) })
}
