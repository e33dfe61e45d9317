package uv

import (
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/eventkind"
	"github.com/uvevent/uvevent/reactor"
)

// This file is a Listener's pure-Go half: a listening socket that is a
// member of the reactor's epoll set (poller_go.go), polled for input while
// the listener is started. Each report accepts what waits, as libuv's
// uv__server_io does, and each connection becomes an IO of the same
// driver (io_go.go).

// goListener is a listener's event on the pure-Go driver.
type goListener struct {
	event.Base
	listenEvent
	keeper
	fd      int
	pl      *goPoller // nil once closed
	polling bool
	reserve int // a spare descriptor for dropping connections at EMFILE (-1: none)
}

type goListenerOps goListener

// listenGo makes ln a listener over a socket of the pure-Go driver.
func listenGo(r *reactor.Reactor, ln *Listener, network string, ep endpoint, reusePort bool, backlog int) error {
	return onLoopWithSocket(r, ep.family, func(fd int) error {
		g := &goListener{fd: fd, reserve: -1}
		g.init(r, g, &g.Base, network, ep, backlog)
		if err := listenSocket(fd, ep, reusePort, backlog); err != nil {
			return err
		}
		g.addr = socketAddr(fd, false)
		var err error
		if g.pl, err = joinPoller(r, fd, g); err != nil {
			return err
		}
		// As package net does, Close removes the socket file; a name
		// beginning with '@' is abstract (x/sys's convention): no file.
		if name := g.addr.String(); ep.transport == "unix" && !strings.HasPrefix(name, "@") {
			g.unlink = name
		}
		g.reserve, _ = unix.Open("/dev/null", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		eventkind.Init(&g.Base, (*goListenerOps)(g), true, event.GoOwned)
		ln.e = &g.listenEvent
		trackGo(ln, &ln.Handle, r, g)
		return nil
	})
}

// listenSocket sets a listening socket's options as libuv does
// (SO_REUSEADDR for TCP, IPV6_V6ONLY as the network asks), binds it and
// listens: the kernel queues connections from now on.
func listenSocket(fd int, ep endpoint, reusePort bool, backlog int) error {
	if ep.transport == "tcp" {
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1); err != nil {
			return os.NewSyscallError("setsockopt SO_REUSEADDR", err)
		}
		if ep.family == unix.AF_INET6 {
			v6only := 0
			if ep.v6only {
				v6only = 1
			}
			if err := unix.SetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_V6ONLY, v6only); err != nil {
				return os.NewSyscallError("setsockopt IPV6_V6ONLY", err)
			}
		}
	}
	if reusePort {
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEPORT, 1); err != nil {
			return os.NewSyscallError("setsockopt SO_REUSEPORT", err)
		}
	}
	if err := unix.Bind(fd, ep.sa); err != nil {
		return os.NewSyscallError("bind", err)
	}
	return errnoError("listen", unix.Listen(fd, backlog))
}

func (o *goListenerOps) Owner() event.Owner { return o.r.Owner() }
func (o *goListenerOps) Event() event.Event { return (*goListener)(o) }
func (o *goListenerOps) Describe() string   { return o.describe() }

func (o *goListenerOps) Arm() error {
	if err := armable(o.r); err != nil {
		return err
	}
	return o.holdIfArmed((*goListener)(o).watch(true))
}

func (o *goListenerOps) Disarm() {
	(*goListener)(o).watch(false)
	o.dropRef()
}

// Free ends Accept's side (closing), then takes the socket out of the
// epoll set and closes it.
func (o *goListenerOps) Free(bool) {
	g := (*goListener)(o)
	g.dropRef()
	g.closing()
	if pl := g.pl; pl != nil {
		g.watch(false)
		g.pl = nil
		pl.remove(g.fd)
		unix.Close(g.fd)
	}
	if g.reserve >= 0 {
		unix.Close(g.reserve)
		g.reserve = -1
	}
}

// watch polls the socket for connections, or stops.
func (g *goListener) watch(on bool) error {
	if g.pl == nil || on == g.polling {
		return nil
	}
	var from, to uint32 = 0, unix.EPOLLIN
	if !on {
		from, to = to, from
	}
	if err := g.pl.ctlMask(g.fd, from, to); err != nil {
		return err
	}
	g.polling = on
	return nil
}

// fired accepts the connections waiting, on the loop, while the listener
// is started and open (a callback may stop or close it).
func (g *goListener) fired(uint32) {
	for range 128 {
		if g.pl == nil || eventkind.LoopRefs(g) == 0 || g.Flags().Has(event.Closed) {
			return
		}
		fd, _, err := unix.Accept4(g.fd, unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC)
		switch {
		case err == unix.EINTR, err == unix.ECONNABORTED:
			continue
		case err == unix.EAGAIN:
			return
		case (err == unix.EMFILE || err == unix.ENFILE) && g.dropWaiting():
			return
		case err != nil:
			g.accept(nil, g.acceptError(err.(unix.Errno)))
			return
		}
		c, err := goIO(g.r, fd, g.transport)
		if err != nil {
			unix.Close(fd)
		}
		g.accept(c, err)
	}
}

// dropWaiting drops the connections waiting when descriptors ran out, as
// libuv does: the spare descriptor is given up to accept each and close it,
// then taken again. Without a spare, it reports false: the error goes to
// the callbacks.
func (g *goListener) dropWaiting() bool {
	if g.reserve < 0 {
		return false
	}
	unix.Close(g.reserve)
	for {
		fd, _, err := unix.Accept4(g.fd, unix.SOCK_CLOEXEC)
		if err == unix.EINTR || err == unix.ECONNABORTED {
			continue
		}
		if err != nil {
			break
		}
		unix.Close(fd)
	}
	g.reserve, _ = unix.Open("/dev/null", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	return true
}
