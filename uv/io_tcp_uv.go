package uv

import (
	"net"
	"time"

	"golang.org/x/sys/unix"

	uvcgo "github.com/uvevent/uvevent/internal/cgo"
)

// This file is the TCP transport's libuv half (uv_tcp_t): the calls a
// "tcp" endpoint makes and a TCP handle's addresses.

// tcpCalls are a TCP target's calls on the libuv driver.
func tcpCalls(t tcpTarget) uvCalls {
	return uvCalls{
		newHandle: func(l *uvcgo.Loop, id uint64) (uvcgo.Handle, error) { return l.NewTCP(id) },
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

// keepAlive: uv_tcp_keepalive turns the probes on or off. Turning them on,
// it takes an idle delay (the one asked for, or the socket's own when Idle
// leaves it alone), and libuv 1.44 sets its own interval (1 s) and count
// (10) with it: the socket's are read first and put back right after the
// call, then the socket takes the interval and the count asked for, as the
// pure-Go driver's does. So a value the kernel refuses leaves the socket as
// it leaves the pure-Go driver's, never with libuv's 1 s or 10
// (TestTCPKeepAliveRefusedLeavesTheRest).
//
// An unopened connection's socket takes them as the pure-Go driver's do:
// keep-alive needs nothing of libuv's.
func (s *uvStream) keepAlive(cfg net.KeepAliveConfig) error {
	if s.unopened() {
		return setKeepAlive(s.lz.fd, cfg)
	}
	fd, err := s.loop.Fileno(s.h)
	if err != nil {
		return err
	}
	idle, set := keepAliveSeconds(cfg.Idle, keepAliveIdle)
	var had net.KeepAliveConfig // the socket's interval and count before libuv's
	if cfg.Enable {
		get := func(opt int) (int, error) {
			v, err := unix.GetsockoptInt(fd, unix.IPPROTO_TCP, opt)
			return v, errnoError("getsockopt", err)
		}
		if !set {
			if idle, err = get(tcpKeepIdle); err != nil {
				return err
			}
		}
		secs, err := get(unix.TCP_KEEPINTVL)
		if err != nil {
			return err
		}
		had.Interval = time.Duration(secs) * time.Second
		if had.Count, err = get(unix.TCP_KEEPCNT); err != nil {
			return err
		}
	}
	if err := s.loop.TCPKeepAlive(s.h, cfg.Enable, uint(max(idle, 0))); err != nil {
		return err
	}
	if cfg.Enable {
		if err := setKeepAliveOptions(fd, had, false); err != nil {
			return err
		}
	}
	return setKeepAliveOptions(fd, cfg, !cfg.Enable)
}
