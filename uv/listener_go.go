package uv

import (
	"os"

	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/eventkind"
	"github.com/uvevent/uvevent/reactor"
)

// This file is a Listener's pure-Go half: a listening socket that is a
// member of the reactor's epoll set (poller_go_linux.go), polled for input while
// the listener is started. Each report accepts what waits, as libuv's
// uv__server_io does, and each connection becomes an IO of the same
// driver (io_go.go). A failed accept pauses accepting (listener.go); no
// descriptor is kept in reserve to drop connections with, as libuv does:
// another thread may take the one given up, and the accept fail again.

// goListener is a listener's event on the pure-Go driver.
type goListener struct {
	event.Base
	listenEvent
	keeper
	fd      int
	pl      *goPoller // nil once closed
	polling bool
	peer    unix.RawSockaddrAny // a TCP connection's peer, as accept4 gives it
}

type goListenerOps goListener

// listenGo makes ln a listener over a socket of the pure-Go driver.
func listenGo(r *reactor.Reactor, ln *Listener, network string, ep endpoint, reusePort bool, backlog int) error {
	return onLoopWithSocket(r, ep.family, func(fd int) error {
		if err := listenSocket(fd, ep, reusePort, backlog); err != nil {
			return err
		}
		g, err := goListenerOn(r, ln, fd, network, ep, backlog)
		if err != nil {
			return err
		}
		g.unlink = socketFile(ep, g.addr)
		return nil
	})
}

// goListenerOn makes ln the listener of fd, a listening socket, on the
// loop (on error fd is left open).
func goListenerOn(r *reactor.Reactor, ln *Listener, fd int, network string, ep endpoint, backlog int) (*goListener, error) {
	g := &goListener{fd: fd}
	g.init(r, g, &g.Base, network, ep, backlog)
	g.watch = g.watchSocket
	g.addr = socketAddr(fd, false)
	var err error
	if g.pl, err = joinPoller(r, fd, g); err != nil {
		return nil, err
	}
	eventkind.Init(&g.Base, (*goListenerOps)(g), true, event.GoOwned)
	ln.e = &g.listenEvent
	trackGo(ln, &ln.handle, r, g)
	return g, nil
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
func (o *goListenerOps) Subscribed()        { o.subscribed() }

func (o *goListenerOps) Arm() error {
	if err := o.startable(o.r); err != nil {
		return err
	}
	return o.holdIfArmed(o.armAccept())
}

func (o *goListenerOps) Disarm() {
	(*goListener)(o).watchSocket(false)
	o.dropRef()
}

// Free ends Accept's side (closing), then takes the socket out of the
// epoll set and closes it.
func (o *goListenerOps) Free(bool) {
	g := (*goListener)(o)
	g.dropRef()
	g.closing()
	if pl := g.pl; pl != nil {
		g.watchSocket(false)
		g.pl = nil
		pl.remove(g.fd)
		unix.Close(g.fd)
	}
}

// watchSocket polls the socket for connections, or stops.
func (g *goListener) watchSocket(on bool) error {
	if g.pl == nil || on == g.polling {
		return nil
	}
	var from, to uint32 = 0, epollIn
	if !on {
		from, to = to, from
	}
	if err := g.pl.ctlMask(g.fd, from, to); err != nil {
		return err
	}
	g.polling = on
	return nil
}

// acceptSocket is accept (accept4(2) on Linux), which a test replaces to
// make accepts fail.
var acceptSocket = accept

// fired accepts the connections waiting, on the loop, while the listener
// is started and open (a callback may stop or close it) and Accept's queue
// has room (not stalled: the rest wait in the kernel's backlog). A failed accept
// pauses accepting; EINTR and ECONNABORTED (a connection reset while in
// the backlog) are passed over, as package net does.
func (g *goListener) fired(uint32) {
	var peer *unix.RawSockaddrAny
	if g.transport == "tcp" {
		peer = &g.peer
	}
	for range 128 {
		if g.pl == nil || g.stalled || eventkind.LoopRefs(g) == 0 || g.Flags().Has(event.Closed) {
			return
		}
		fd, err := acceptSocket(g.fd, true, peer)
		switch {
		case err == unix.EINTR, err == unix.ECONNABORTED:
			continue
		case err == unix.EAGAIN:
			return
		case err != nil:
			g.acceptFailed(os.NewSyscallError("accept", err))
			return
		}
		c, err := goIO(g.r, fd, g.transport, true)
		if err != nil {
			unix.Close(fd)
			g.acceptFailed(err)
			return
		}
		c.e.setNetwork(g.network)
		if peer != nil {
			acceptedAddrs(c.e, peer)
		}
		g.accept(c, nil)
	}
}

// acceptedAddrs keeps an accepted TCP connection's peer address as
// accept4(2) gave it, its local one left for the connection's setup
// (ioEvent.setUp: getsockname(2), by the goroutine of the Accept that
// takes it), as package net reads them, once, as it accepts a
// connection. A server's RemoteAddr and LocalAddr (net/http asks both of
// every connection) then cost no call to the loop and no getpeername(2).
// Either unread, both are read when first asked for (addrCache). On the
// loop.
func acceptedAddrs(e *ioEvent, peer *unix.RawSockaddrAny) {
	if f := peer.Addr.Family; f != unix.AF_INET && f != unix.AF_INET6 {
		return // a Unix connection: its addresses are read when asked for
	}
	a := new(tcpAddrPair)
	if a.setRaw(pairRemote, peer) {
		e.pair = a
	}
}
