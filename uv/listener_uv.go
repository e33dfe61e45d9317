package uv

// The libuv driver's listener: a listening uv_tcp_t or uv_pipe_t
// (internal/cgo/tcp.c, internal/cgo/pipe.c, internal/cgo/stream.c).

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

// listenUV makes ln a listener over a libuv handle.
func listenUV(r *reactor.Reactor, ln *Listener, network string, ep endpoint, reusePort bool, backlog int) error {
	e := &uvListener{}
	e.init(r, e, &e.Base, network, ep, backlog)
	if err := newCore(r, &e.core, e, 0, func(l *uvcgo.Loop, id uint64) (uvcgo.Handle, error) {
		h, err := ep.newHandle(l, id, true)
		if err != nil {
			return 0, err
		}
		if err = listenOn(l, h, ep, reusePort, backlog); err == nil {
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
		return err
	}
	ln.e = &e.listenEvent
	track(ln, &ln.Handle, &e.core)
	return nil
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

func (e *uvListener) arm() error {
	if len(e.held) > 0 {
		// The connections held go to the callbacks first, on a later
		// turn: a notification cannot run inside Start.
		go e.r.Post(e.flushHeld)
	}
	return e.loop.ListenerStart(e.h, e.backlog)
}

// wants: libuv accepts every connection waiting in one go, so a callback
// that stops the listener leaves the turn's later connections accepted:
// they are wanted all the same, and held for the next Start rather than
// dropped.
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

func (e *uvListener) disarm() {
	if e.h != 0 {
		e.loop.ListenerStop(e.h)
	}
}

func (e *uvListener) completed(rec *uvcgo.Completion) {
	if rec.Status < 0 {
		e.accept(nil, e.acceptError(syscall.Errno(-rec.Status)))
		return
	}
	data, _ := uvcgo.Take(rec)
	h := uvcgo.Handle(data)
	c, err := adoptIO(e.r, h, e.transport)
	if err != nil {
		e.loop.CloseHandle(h)
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
