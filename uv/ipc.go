package uv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/eventkind"
	"github.com/uvevent/uvevent/reactor"
)

// This file holds the IPC pipe: a Unix stream socket to another process
// (a child started with ProcessOptions.IPC, or the parent seen from the
// child) over which connections and listening sockets are passed, as
// Node's cluster shares a listener with its workers. Each handle travels as
// one byte, its kind (ipcConn or ipcListener), carrying a duplicate of its
// descriptor (SCM_RIGHTS). Its drivers' halves: ipc_uv.go (uv_pipe_t made
// with ipc = 1, uv_write2, uv_pipe_pending_count and uv_accept), ipc_go.go
// (sendmsg and recvmsg on a socket in the reactor's epoll set). The wire
// is the same, so either driver talks to the other.

// The byte a passed handle travels with (internal/cgo/ipc.c's too).
const (
	ipcConn     = 'c'
	ipcListener = 'l'
)

// IPCFD is the descriptor at which a child started with ProcessOptions.IPC
// finds its end of the IPC pipe (the first after the standard streams, as
// Node's fork gives it): the child opens it with OpenIPC(r, uv.IPCFD).
const IPCFD = 3

// An IPC is the event of an IPC pipe: a Unix stream socket to another
// process over which handles are passed. SendIO passes a connection and
// SendListener a listening socket; the other end receives each as a new
// *IO or *Listener of its own reactor, over a descriptor of its own: the
// sender's handle stays the sender's, open and working until it closes it
// (closing it after the send, at once or later, is its choice, as Node's
// keepOpen). Two processes serving on one passed listener share its
// connections, the kernel giving each to one of them.
//
// Started, an IPC notifies its callbacks of each handle that comes in, as
// an *IO or *Listener result the callback owns (close it or keep it); a
// handle that could not be taken (a descriptor of another kind) is an
// error result, and the end of the pipe (the other process closed it or
// died) is io.EOF, once, after the handles that came before it (kept for
// the first callback when none would hear of it). Receive waits for the next handle from a
// goroutine (it starts the IPC the first time, as a Listener's Accept
// does). Each handle has one owner: the oldest Receive waiting, else the
// callbacks, else the queue, where it waits for the next Receive or for
// the first callback that subscribes (the IPC started with none, or
// Receive's turn passed), which gets the queued handles in order before
// the ones after them. At most 64 wait (and the rest of the read that
// reached that bound, at most 32 more): then the IPC stops reading, and
// the other end's passes wait for room, until a Receive or a callback
// takes them.
//
// Both drivers pass handles the same way and over the same wire, so either
// talks to the other: a parent on the libuv driver can pass to a child on
// the pure-Go driver. The wire is uvevent's own (one byte per handle), not
// Node's: it carries handles only, no messages, and a Node.js process
// cannot be the other end (its process.send framing is JSON); a worker
// that needs messages too gets another pipe (its standard input, say).
// An IPC is an event reference (see Lifetime in the
// package doc): started, it is held by its reactor; Close fails the sends
// and Receives that wait with ErrClosed and closes the handles received
// and not yet taken.
type IPC struct {
	handle
	e *ipcEvent
}

// Passed is a handle that came over an IPC pipe: exactly one of IO (a
// connection) and Listener (a listening socket) is set. It is the
// receiver's, who closes it.
type Passed struct {
	// IO is the connection passed, or nil.
	IO *IO
	// Listener is the listening socket passed, or nil.
	Listener *Listener
}

// Close closes the handle it holds.
func (p Passed) Close() error {
	switch {
	case p.IO != nil:
		return p.IO.Close()
	case p.Listener != nil:
		return p.Listener.Close()
	}
	return nil
}

// ipcEvent is what an IPC's event holds on either driver, and what both
// share: the passes in flight, Receive's side, the counters, Info. The
// event is a uvIPC (ipc_uv.go) or a goIPC (ipc_go.go); t is that
// transport. Loop-owned but for the counters.
type ipcEvent struct {
	r    *reactor.Reactor
	self event.Event
	base *event.Base
	t    ipcTransport
	fd   int // the pipe's descriptor, for Info

	sends []*ipcSend        // passes handed to the transport, oldest first
	recvs takeQueue[Passed] // Receive's side: handles no Receive took yet, the Receives waiting
	held  []Passed          // received in the turn a callback stopped the IPC, for the next Start
	ended error             // how receiving ended (io.EOF, a reset), told once
	// endTold: the callbacks were told of ended (tellEnd).
	endTold bool
	// stalled: the queue for Receive is full, reading stops until a
	// Receive takes from it (takeQueue.drained); Start does not undo it.
	stalled bool

	sent, received, failed atomic.Uint64
}

// ipcTransport is what a driver gives the shared logic: pass fd (a
// duplicate the transport owns from the call on, and closes) with tag.
// Each accepted pass ends with one sendDone, in order; an error returned
// means it was not accepted.
type ipcTransport interface {
	pass(fd int, tag byte) error
	// reading reads again (on) or stops reading (off), for the queue
	// for Receive: on reads only while the IPC is started and open and
	// receiving has not ended.
	reading(on bool)
}

// ipcQueueLimit bounds the handles an IPC queues for Receive while nobody
// takes them: past it, it stops reading, and the next ones wait in the
// socket, the other end's passes waiting for room.
const ipcQueueLimit = 64

type ipcSend struct {
	err error
	ch  chan struct{}
}

// OpenIPC makes an IPC of fd, a Unix stream socket (the descriptor a child
// started with ProcessOptions.IPC inherits at IPCFD, or an end of a
// socketpair): the IPC owns fd from then on and closes it when it closes
// (on error, fd stays the caller's). Another descriptor is refused with an
// error matching syscall.ENOTSOCK (not a socket) or syscall.EINVAL (not a
// Unix stream socket).
func OpenIPC(r *reactor.Reactor, fd int) (*IPC, error) {
	if err := reactorMade("OpenIPC", r); err != nil {
		return nil, err
	}
	if err := unixStream(fd); err != nil {
		return nil, fmt.Errorf("uv: OpenIPC(%d): %w", fd, err)
	}
	p := &IPC{}
	var err error
	if r.Driver() == reactor.DriverGo {
		err = openGoIPC(r, fd, p)
	} else {
		err = openUVIPC(r, fd, p)
	}
	if err != nil {
		return nil, fmt.Errorf("uv: OpenIPC(%d): %w", fd, err)
	}
	return p, nil
}

// unixStream refuses a descriptor that is not a Unix stream socket.
func unixStream(fd int) error {
	domain, err := sockDomain(fd)
	if err != nil {
		return os.NewSyscallError("getsockopt SO_DOMAIN", err)
	}
	typ, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TYPE)
	if err != nil {
		return os.NewSyscallError("getsockopt SO_TYPE", err)
	}
	if domain != unix.AF_UNIX || typ != unix.SOCK_STREAM {
		return fmt.Errorf("not a Unix stream socket: %w", errInvalid)
	}
	return nil
}

// init sets the shared part of an IPC's event, self, whose Base is base.
func (e *ipcEvent) init(r *reactor.Reactor, self event.Event, base *event.Base, t ipcTransport, fd int) {
	e.r, e.self, e.base, e.t, e.fd = r, self, base, t, fd
	e.recvs.limit = ipcQueueLimit
	unstall := e.unstall
	e.recvs.drained = func() { e.r.Post(unstall) }
	e.recvs.flusher = e.flushRecvs
}

// subscribed: a callback joined; the handles queued for Receive go to it
// (eventkind.SubscriptionWatcher). Start calls it too, for a callback
// that joined while the IPC was stopped.
func (e *ipcEvent) subscribed() {
	e.recvs.subscribed(e.r, e.ended != nil && !e.endTold)
}

// flushRecvs notifies the callbacks of the handles queued for Receive,
// oldest first, while the IPC is started and has callbacks; the queue
// going below its bound ends a stall. Then the end, if it came, is told.
func (e *ipcEvent) flushRecvs() {
	e.recvs.flush(e.base, e.serving, passedResult, func(p Passed) { p.Close() })
	e.tellEnd()
}

// tellEnd tells the callbacks of a started IPC how receiving ended, once,
// after every handle that came before it went to its owner (none is
// queued or held): an end that came while nobody would hear of it (no
// callback, or handles still queued for the callbacks) is kept for them,
// as an IO keeps its end. The Receives are told by recvs.end.
func (e *ipcEvent) tellEnd() {
	if e.ended == nil || e.endTold || len(e.held) > 0 || !e.serving() || e.recvs.callbacks(e.base) == 0 {
		return
	}
	e.recvs.mu.Lock()
	queued := len(e.recvs.queue) > 0
	e.recvs.mu.Unlock()
	if queued {
		return
	}
	e.endTold = true
	eventkind.Notify(e.base, nil, e.ended)
}

// serving reports whether the IPC is started and open.
func (e *ipcEvent) serving() bool {
	return eventkind.LoopRefs(e.self) > 0 && !e.self.Flags().Has(event.Closed)
}

// passedResult is a queued handle as the callbacks see it: the *IO or the
// *Listener.
func passedResult(p Passed) any {
	if p.IO != nil {
		return p.IO
	}
	return p.Listener
}

// unstall reads again once a Receive took a handle from a queue that had
// reached its bound (takeQueue.drained).
func (e *ipcEvent) unstall() {
	if !e.stalled {
		return
	}
	e.stalled = false
	e.t.reading(true)
}

func (e *ipcEvent) kindName() string { return "ipc" }

func (e *ipcEvent) describe() string {
	return fmt.Sprintf("IPC(fd=%d, sent=%d, received=%d, failed=%d)", e.fd, e.sent.Load(), e.received.Load(), e.failed.Load())
}

// SendIO passes the connection c to the other end and waits until the
// pipe took it (the kernel holds it for the other process; that process
// may not have received it yet). c stays open and the caller's. A pass
// fails with the pipe's error when the other process is gone (matching
// syscall.EPIPE or syscall.ECONNRESET); c is then still the caller's and
// nothing was passed. When ctx ends first, SendIO returns ctx's error and
// the pass goes on: the handle may still arrive. Only TCP and Unix socket
// connections can be passed, an end of Pipe (a socket pair) among them;
// a terminal (OpenTTY) or an os.Pipe's end (OpenPipe) is refused with
// EINVAL. A closed c is refused with ErrClosed. Not on the loop goroutine
// (event.ErrOnLoop).
func (p *IPC) SendIO(ctx context.Context, c *IO) error {
	if c == nil || c.e == nil {
		return fmt.Errorf("uv: IPC.SendIO: %w", errZero("IO"))
	}
	return p.send(ctx, "SendIO", ipcConn, func() (int, error) {
		if c.e.closed {
			return -1, ErrClosed
		}
		fd := c.e.t.laneFD()
		if fd < 0 {
			return -1, fmt.Errorf("a %s IO cannot be passed: %w", c.e.transport, errInvalid)
		}
		if _, err := transportOf(fd); err != nil { // a pipe's end opened with OpenPipe
			return -1, fmt.Errorf("an IO over no stream socket cannot be passed (%v): %w", err, errInvalid)
		}
		return fd, nil
	})
}

// SendListener passes the listening socket l to the other end, as SendIO
// passes a connection: l stays the caller's and goes on listening (both
// processes then take connections from it, the kernel giving each to one
// of them, until one closes its listener). A Unix socket's file stays
// the sender's to remove: the receiver's Close does not remove it.
func (p *IPC) SendListener(ctx context.Context, l *Listener) error {
	if l == nil || l.e == nil {
		return fmt.Errorf("uv: IPC.SendListener: %w", errZero("Listener"))
	}
	return p.send(ctx, "SendListener", ipcListener, func() (int, error) {
		if l.e.self.Flags().Has(event.Closed) {
			return -1, ErrClosed
		}
		return listenerFD(l.e.self)
	})
}

// send duplicates the descriptor fdOf gives (on the loop) and hands it to
// the transport with tag, then waits for the pass to end or ctx to.
func (p *IPC) send(ctx context.Context, op string, tag byte, fdOf func() (int, error)) error {
	if p == nil || p.e == nil {
		return fmt.Errorf("uv: IPC.%s: %w", op, errZero("IPC"))
	}
	if ctx == nil {
		return fmt.Errorf("uv: IPC.%s: %w", op, event.ErrNilContext)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("uv: IPC.%s: %w", op, err)
	}
	e := p.e
	if e.r.Owner().Owned() {
		return fmt.Errorf("uv: IPC.%s: %w", op, event.ErrOnLoop)
	}
	s := &ipcSend{ch: make(chan struct{}, 1)}
	var err error
	if x := e.r.Call(func() {
		if e.self.Flags().Has(event.Closed) {
			err = ErrClosed
			return
		}
		var fd int
		if fd, err = fdOf(); err != nil {
			return
		}
		dup, derr := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
		if derr != nil {
			err = os.NewSyscallError("fcntl F_DUPFD_CLOEXEC", derr)
			return
		}
		e.sends = append(e.sends, s)
		if err = e.t.pass(dup, tag); err != nil {
			e.sends = e.sends[:len(e.sends)-1]
		}
	}); x != nil {
		err = ErrClosed
	}
	if err != nil {
		return fmt.Errorf("uv: IPC.%s: %w", op, err)
	}
	select {
	case <-s.ch:
	case <-ctx.Done():
		return fmt.Errorf("uv: IPC.%s: %w", op, ctx.Err())
	}
	if s.err != nil {
		return fmt.Errorf("uv: IPC.%s: %w", op, s.err)
	}
	return nil
}

// sendDone ends the oldest pass in flight with err. Loop only.
func (e *ipcEvent) sendDone(err error) {
	if len(e.sends) == 0 {
		return // closing told it already
	}
	s := e.sends[0]
	e.sends[0] = nil
	e.sends = e.sends[1:]
	if err != nil {
		e.failed.Add(1)
	} else {
		e.sent.Add(1)
	}
	s.err = err
	s.ch <- struct{}{}
}

// passedOf makes what came over the pipe of fd (a descriptor of its own),
// as the IO or Listener tag says, with make building it on this driver.
func passedOf(tag byte, transport string, makeIO func() (*IO, error), makeListener func() (*Listener, error)) (Passed, error) {
	switch tag {
	case ipcConn:
		c, err := makeIO()
		return Passed{IO: c}, err
	case ipcListener:
		l, err := makeListener()
		return Passed{Listener: l}, err
	}
	return Passed{}, fmt.Errorf("uv: IPC: a %s descriptor came with %q, not a handle's kind: %w", transport, tag, errInvalid)
}

// deliver hands what came in to the callbacks: p, or err (a handle that
// could not be taken, or the end of the pipe, told once).
func (e *ipcEvent) deliver(p Passed, err error) {
	switch {
	case err == nil:
		e.received.Add(1)
		var res any = p.Listener
		if p.IO != nil {
			p.IO.e.connReady()
			res = p.IO
		}
		// One owner: a waiting Receive, else the callbacks, else
		// the queue for Receive (the IPC started with no callback).
		if e.recvs.forCallbacks(e.base) {
			if e.recvs.notify(e.base, res) != nil {
				p.Close() // nobody got it
			}
			return
		}
		e.onRecv(e.self, res, nil)
	case isEnd(err):
		if e.ended != nil {
			return
		}
		e.ended = err
		e.recvs.end(err) // the Receives waiting, and those after the handles queued
		e.tellEnd()
	default:
		e.failed.Add(1)
		eventkind.Notify(e.base, nil, err)
	}
}

// isEnd reports an error that ends receiving: the end of the pipe, or a
// failed read.
func isEnd(err error) bool {
	var x *ipcEnd
	return err == io.EOF || errors.As(err, &x)
}

// ipcEnd is a read error that ended receiving.
type ipcEnd struct{ err error }

func (e *ipcEnd) Error() string { return "receiving ended: " + e.err.Error() }
func (e *ipcEnd) Unwrap() error { return e.err }

// endWith is the error that ends receiving: io.EOF as it is, another one
// wrapped.
func endWith(err error) error {
	if err == io.EOF {
		return err
	}
	return &ipcEnd{err: err}
}

// onRecv is Receive's subscription: a handle goes to the first Receive
// waiting, or to the queue; an error to the first Receive waiting (the
// end went to every one from deliver).
func (e *ipcEvent) onRecv(_ event.Event, res any, err error) {
	var p Passed
	switch v := res.(type) {
	case *IO:
		p.IO = v
	case *Listener:
		p.Listener = v
	}
	if err != nil && (isEnd(err) || isClosed(err)) {
		return // deliver told the waiters of the end, closing tells them it closed
	}
	if err == nil && e.recvs.passing {
		return // the callbacks own it
	}
	// An error nobody waits for is counted in Info.
	if !e.recvs.hand(p, err) {
		p.Close() // the IPC closed: nobody will take it
		return
	}
	if err == nil && e.recvs.callbacks(e.base) > 0 {
		// Queued while callbacks are there (the Receive it was routed
		// to withdrew meanwhile, or a flush to them is due): it goes
		// to them, not to a Receive that may never come.
		e.subscribed()
	}
	if err == nil && !e.stalled && e.recvs.atLimit() {
		// As many handles wait for Receive as the queue holds: the
		// next ones wait in the socket until a Receive takes one.
		e.stalled = true
		e.t.reading(false)
	}
}

// Receive waits for the next handle passed by the other end (or ctx's
// end) and returns it: the caller's, to close. It starts the IPC the
// first time. Once the other end has closed the pipe (or died), Receive
// returns io.EOF after the handles that came before. Not on the loop
// goroutine (event.ErrOnLoop). When ctx ends first, a handle that comes
// later goes to the next Receive.
func (p *IPC) Receive(ctx context.Context) (Passed, error) {
	if p == nil || p.e == nil {
		return Passed{}, fmt.Errorf("uv: IPC.Receive: %w", errZero("IPC"))
	}
	if ctx == nil {
		return Passed{}, fmt.Errorf("uv: IPC.Receive: %w", event.ErrNilContext)
	}
	e := p.e
	if e.r.Owner().Owned() {
		return Passed{}, fmt.Errorf("uv: IPC.Receive: %w", event.ErrOnLoop)
	}
	got, err := e.recvs.wait(ctx, e.r, e.self, e.onRecv)
	if err == io.EOF {
		return Passed{}, io.EOF
	}
	if err != nil {
		return Passed{}, fmt.Errorf("uv: IPC.Receive: %w", err)
	}
	return got, nil
}

// closing fails the passes in flight and the Receives waiting with
// ErrClosed, and closes the handles received and not taken. The transport
// closes the duplicates it holds.
func (e *ipcEvent) closing() {
	for _, s := range e.sends {
		s.err = ErrClosed
		s.ch <- struct{}{}
	}
	e.sends = nil
	for _, p := range append(e.recvs.close(), e.held...) {
		p.Close()
	}
	e.held = nil
}

// transportOf names the transport of a passed socket: "tcp" for an
// Internet socket, "unix" for a Unix one; EINVAL for anything else (a
// datagram socket, a file).
func transportOf(fd int) (string, error) {
	typ, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TYPE)
	if err != nil {
		return "", os.NewSyscallError("getsockopt SO_TYPE", err)
	}
	domain, err := sockDomain(fd)
	if err != nil {
		return "", os.NewSyscallError("getsockopt SO_DOMAIN", err)
	}
	switch {
	case typ != unix.SOCK_STREAM:
	case domain == unix.AF_INET || domain == unix.AF_INET6:
		return "tcp", nil
	case domain == unix.AF_UNIX:
		return "unix", nil
	}
	return "", fmt.Errorf("uv: IPC: descriptor %d is no TCP or Unix stream socket: %w", fd, syscall.EINVAL)
}
