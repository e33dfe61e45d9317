package uv

// The libuv driver's listener: a listening socket made as the pure-Go
// driver makes it (listenSocket), watched by the shim with a uv_poll_t,
// which accepts each connection with accept4(2) into a uv_tcp_t or
// uv_pipe_t (internal/cgo/stream.c). libuv's uv_listen is not used: at
// EMFILE, once another thread has taken the descriptor libuv keeps in
// reserve, its accept loop calls back and retries without end inside
// uv_run.

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/eventkind"
	uvcgo "github.com/uvevent/uvevent/internal/cgo"
	"github.com/uvevent/uvevent/reactor"
)

// uvListener is a listener's event on the libuv driver.
type uvListener struct {
	core
	listenEvent
}

// listenUV makes ln a listener over a socket the shim watches.
func listenUV(r *reactor.Reactor, ln *Listener, network string, ep endpoint, reusePort bool, backlog int) error {
	return onLoopWithSocket(r, ep.family, func(fd int) error {
		if err := listenSocket(fd, ep, reusePort, backlog); err != nil {
			return err
		}
		e, err := uvListenerOn(r, ln, fd, network, ep, backlog)
		if err != nil {
			return err
		}
		e.unlink = socketFile(ep, e.addr)
		return nil
	})
}

// uvListenerOn makes ln the listener of fd, a listening socket, which the
// listener owns from then on; on error fd is left open. On the loop.
func uvListenerOn(r *reactor.Reactor, ln *Listener, fd int, network string, ep endpoint, backlog int) (*uvListener, error) {
	e := &uvListener{}
	e.init(r, e, &e.Base, network, ep, backlog)
	e.watch = e.watchSocket
	e.addr = socketAddr(fd, false)
	if err := newCore(r, &e.core, e, 0, func(l *uvcgo.Loop, id uint64) (uvcgo.Handle, error) {
		// A turn accepts at most Accept's queue's bound (the
		// backlog): with nobody accepting, the queue stops short of
		// twice it.
		return l.NewListener(id, fd, ep.transport == "unix", e.accepts.limit)
	}); err != nil {
		return nil, err
	}
	ln.e = &e.listenEvent
	track(ln, &ln.handle, &e.core)
	return e, nil
}

// watchSocket starts or stops the shim watching the socket.
func (e *uvListener) watchSocket(on bool) error {
	if e.h == 0 {
		return nil
	}
	if !on {
		e.loop.ListenerStop(e.h)
		return nil
	}
	return e.loop.ListenerStart(e.h)
}

func (e *uvListener) arm() error {
	if len(e.held) > 0 {
		// The connections held go to the callbacks first, on a later
		// turn: a notification cannot run inside Start.
		go e.r.Post(e.flushHeld)
	}
	return e.armAccept()
}

// wants: the shim accepts every connection waiting (up to a batch) in one
// go, so a callback that stops the listener leaves the turn's later
// connections accepted: they are wanted all the same, and held for the
// next Start rather than dropped.
func (e *uvListener) wants(rec *uvcgo.Completion) bool {
	return rec.Kind == uvcgo.CompletionConnection && rec.Status >= 0
}

// flushHeld hands the connections held while stopped to the callbacks, in
// order, while the listener is started and open.
func (e *uvListener) flushHeld() {
	for len(e.held) > 0 && eventkind.LoopRefs(e) > 0 && !e.Flags().Has(event.Closed) {
		c := e.held[0]
		e.held[0] = nil
		e.held = e.held[1:]
		e.accept(c, nil)
	}
}

func (e *uvListener) disarm() { e.watchSocket(false) }

// closing ends Accept's side, then closes the socket, before the handle
// closes.
func (e *uvListener) closing() {
	e.listenEvent.closing()
	if e.h != 0 {
		e.loop.ListenerClose(e.h)
	}
}

func (e *uvListener) completed(rec *uvcgo.Completion) {
	if rec.Status < 0 {
		// The shim stopped watching: accepting pauses.
		e.acceptFailed(os.NewSyscallError("accept", syscall.Errno(-rec.Status)))
		return
	}
	data, _ := uvcgo.Take(rec)
	var c *IO
	var err error
	if e.transport == "tcp" {
		c, err = e.adoptTCP(data)
	} else {
		h := uvcgo.Handle(data)
		if c, err = adoptIO(e.r, h, e.transport); err != nil {
			e.loop.CloseHandle(h)
		}
	}
	if c != nil {
		c.e.setNetwork(e.network)
	}
	stopped := eventkind.LoopRefs(e) == 0
	switch {
	case err == nil && (stopped || len(e.held) > 0):
		e.held = append(e.held, c) // see wants; behind those held already
	case stopped:
		e.failed.Add(1) // no callback may hear of it now
	default:
		e.accept(c, err)
	}
}

// adoptTCP makes the IO of an accepted TCP connection, p its record's
// payload: the connection stays unopened in libuv (io_lazy_uv.go). Its
// addresses are read as package net reads them, once, as it is accepted:
// the peer's as accept4(2) gave it (the shim kept it), the local one with
// getsockname(2) at the connection's setup (ioEvent.setUp: by the
// goroutine of the Accept that takes it). A server's RemoteAddr and
// LocalAddr (net/http asks both of every connection) then cost no call to
// the loop, and the peer's address is there even once the peer has reset
// the connection. Either unread, both are read when first asked for
// (addrCache). On the loop.
func (e *uvListener) adoptTCP(p uintptr) (*IO, error) {
	fd, peer, perr := e.loop.TakeAccepted(p)
	c, err := adoptLazyIO(e.r, fd)
	if err != nil {
		unix.Close(fd)
		return nil, err
	}
	if perr == nil {
		a := new(tcpAddrPair)
		a.setIP(pairRemote, peer.IP[:peer.IPLen], peer.Port, peer.Zone)
		c.e.pair = a
	}
	return c, nil
}
