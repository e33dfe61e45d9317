package uv

import (
	"context"
	"fmt"
	"net"
	"os"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"

	uvcgo "github.com/uvevent/uvevent/cgo"
	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
)

// A Listener is the listen event: a TCP server socket (uv_tcp_t), or a Unix
// domain one (uv_pipe_t, network "unix"). Started,
// it notifies its callbacks of each accepted connection, as an *IO result
// that the callback owns (Close it, or keep it); an accept that failed is
// an error result (EMFILE when descriptors ran out: libuv dropped that
// connection, and the listener goes on serving). It is also a net.Listener,
// so http.Serve(l, h) works: Accept starts it and queues the connections
// that no Accept waits for yet.
//
// The socket listens from creation. While the listener is stopped, the
// kernel's backlog holds new connections; Start takes them.
//
// A Listener is an event reference (see Handle): dropping it without Close
// is safe.
type Listener struct {
	Handle
	e *listenEvent
}

// ListenConfig holds the options of a listening socket; the zero value is
// fine.
type ListenConfig struct {
	// Backlog is the kernel's queue of connections not yet accepted; 0
	// means 511 (libuv's and Go's usual default).
	Backlog int
	// ReusePort sets SO_REUSEPORT before bind, so that several reactors
	// (one per core) can each listen on the same port, the kernel sharing
	// connections among them.
	ReusePort bool
}

type listenEvent struct {
	core
	network   string
	transport string
	addr      net.Addr
	backlog   int
	unlink    string // the socket file to remove at close

	// Accept's side, loop-owned: connections no Accept took yet, and the
	// Accepts waiting.
	acceptCB *event.Callback
	queue    []*IO
	waiters  []*acceptOp

	accepted, failed atomic.Uint64
}

type acceptOp struct {
	c   *IO
	err error
	ch  chan struct{}
}

var _ net.Listener = (*Listener)(nil)

// Listen listens on address over network ("tcp", "tcp4", "tcp6" or
// "unix") with the default configuration.
func Listen(r *reactor.Reactor, network, address string) (*Listener, error) {
	return ListenConfig{}.Listen(r, network, address)
}

// Listen listens on address over network: "tcp", "tcp4" or "tcp6" (an
// empty host listens on every local address, port 0 on a port the kernel
// picks: Addr tells which), or "unix" (a socket path, removed again by
// Close). The listener is not started.
func (lc ListenConfig) Listen(r *reactor.Reactor, network, address string) (*Listener, error) {
	ep, err := resolveEndpoint(network, address)
	if err != nil {
		return nil, &net.OpError{Op: "listen", Net: network, Err: err}
	}
	if lc.ReusePort && ep.transport != "tcp" {
		return nil, &net.OpError{Op: "listen", Net: network, Addr: ep.addr, Err: fmt.Errorf("uv: ReusePort over %s: %w", network, errInvalid)}
	}
	backlog := lc.Backlog
	if backlog <= 0 {
		backlog = 511
	}
	e := &listenEvent{network: network, transport: ep.transport, backlog: backlog}
	if err := newCore(r, &e.core, e, 0, func(l *uvcgo.Loop, id uint64) (uvcgo.Handle, error) {
		h, err := ep.newHandle(l, id, true)
		if err != nil {
			return 0, err
		}
		if err = listenOn(l, h, ep, lc.ReusePort, backlog); err == nil {
			e.addr, err = addrOf(ep.transport, l, h, false)
		}
		if err != nil {
			l.CloseHandle(h)
			return 0, err
		}
		if ep.transport == "unix" {
			e.unlink = e.addr.String() // as package net does: Close removes the socket file
		}
		return h, nil
	}); err != nil {
		return nil, &net.OpError{Op: "listen", Net: network, Addr: ep.addr, Err: err}
	}
	ln := &Listener{e: e}
	track(ln, &ln.Handle, &e.core)
	return ln, nil
}

// listenOn sets the socket's options, binds it and listens, paused: the
// kernel queues connections until the first Start.
func listenOn(l *uvcgo.Loop, h uvcgo.Handle, ep endpoint, reusePort bool, backlog int) error {
	if reusePort {
		fd, err := l.Fileno(h)
		if err != nil {
			return err
		}
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEPORT, 1); err != nil {
			return os.NewSyscallError("setsockopt SO_REUSEPORT", err)
		}
	}
	if err := ep.bind(l, h); err != nil {
		return err
	}
	if err := l.ListenerStart(h, backlog); err != nil {
		return err
	}
	l.ListenerStop(h) // before any turn: no connection was taken yet
	return nil
}

func (e *listenEvent) kindName() string { return "listener" }

func (e *listenEvent) describe() string {
	return fmt.Sprintf("Listener(%s %s, accepted=%d, failed=%d)", e.network, e.addr, e.accepted.Load(), e.failed.Load())
}

func (e *listenEvent) arm() error { return e.loop.ListenerStart(e.h, e.backlog) }

func (e *listenEvent) disarm() {
	if e.h != 0 {
		e.loop.ListenerStop(e.h)
	}
}

func (e *listenEvent) completed(rec *uvcgo.Completion) {
	if rec.Status < 0 {
		e.failed.Add(1)
		event.Notify(&e.Base, nil, e.acceptError(rec.Status))
		return
	}
	data, _ := uvcgo.Take(rec)
	h := uvcgo.Handle(data)
	c, err := adoptIO(e.r, h, e.transport)
	if err != nil {
		e.loop.CloseHandle(h)
		e.failed.Add(1)
		event.Notify(&e.Base, nil, err)
		return
	}
	e.accepted.Add(1)
	event.Notify(&e.Base, c, nil)
}

// acceptError is the error result of a failed accept: ENFILE, or EMFILE
// when libuv could not drop the connection itself (see docs/io.md). It is
// temporary, as package net's accept errors are, so http.Serve backs off
// and goes on.
func (e *listenEvent) acceptError(status int32) error {
	return &net.OpError{Op: "accept", Net: e.network, Addr: e.addr,
		Err: os.NewSyscallError("accept", syscall.Errno(-status))}
}

// closing ends the Accepts waiting, closes the connections queued for
// Accept, and removes a Unix socket's file.
func (e *listenEvent) closing() {
	if e.unlink != "" {
		os.Remove(e.unlink)
		e.unlink = ""
	}
	for _, w := range e.waiters {
		w.err = ErrClosed
		w.ch <- struct{}{}
	}
	e.waiters = nil
	for _, c := range e.queue {
		c.Close()
	}
	e.queue = nil
}

// onAccept is Accept's subscription: a connection goes to the first Accept
// waiting, or to the queue.
func (e *listenEvent) onAccept(_ event.Event, res any, err error) {
	c, _ := res.(*IO)
	if len(e.waiters) == 0 {
		if c != nil {
			e.queue = append(e.queue, c)
		}
		return // an accept error nobody waits for is counted in Info
	}
	if c == nil && isClosed(err) {
		return // closing tells the waiters
	}
	w := e.waiters[0]
	e.waiters = e.waiters[1:]
	w.c, w.err = c, err
	w.ch <- struct{}{}
}

// AcceptIO waits for the next connection (or ctx's end) and returns it. It
// starts the listener the first time. Not on the loop goroutine.
func (l *Listener) AcceptIO(ctx context.Context) (*IO, error) {
	e := l.e
	w := &acceptOp{ch: make(chan struct{}, 1)}
	var err error
	if e.r.Owned() {
		return nil, fmt.Errorf("uv: Accept: %w", event.ErrOnLoop)
	}
	if x := e.r.Exec(func() {
		switch {
		case e.Flags().Has(event.Closed):
			err = ErrClosed
		case len(e.queue) > 0:
			w.c = e.queue[0]
			e.queue = e.queue[1:]
			w.ch <- struct{}{}
		default:
			if e.acceptCB == nil {
				e.acceptCB = event.NewCallback(e.onAccept)
				if err = e.AddCallback(e.acceptCB); err != nil {
					return
				}
				e.acceptCB.Release()
				if err = e.Start(); err != nil {
					return
				}
			}
			e.waiters = append(e.waiters, w)
		}
	}); x != nil {
		err = ErrClosed
	}
	if err != nil {
		return nil, &net.OpError{Op: "accept", Net: e.network, Addr: e.addr, Err: err}
	}
	select {
	case <-w.ch:
	case <-ctx.Done():
		e.r.Exec(func() {
			for i, x := range e.waiters {
				if x == w {
					e.waiters = append(e.waiters[:i], e.waiters[i+1:]...)
					w.err = ctx.Err()
					w.ch <- struct{}{}
					break
				}
			}
		})
		<-w.ch
		if w.c != nil && w.err != nil {
			w.c.Close()
		}
	}
	if w.err != nil {
		return nil, &net.OpError{Op: "accept", Net: e.network, Addr: e.addr, Err: w.err}
	}
	return w.c, nil
}

// Accept waits for the next connection: see AcceptIO.
func (l *Listener) Accept() (net.Conn, error) {
	c, err := l.AcceptIO(context.Background())
	if err != nil {
		return nil, err
	}
	return c, nil
}

// Addr returns the address the listener is bound to.
func (l *Listener) Addr() net.Addr { return l.e.addr }
