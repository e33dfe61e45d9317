package uv

import (
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/eventkind"
	"github.com/uvevent/uvevent/reactor"
)

// A Listener is the listen event: a TCP server socket (uv_tcp_t), or a Unix
// domain one (uv_pipe_t, network "unix"); on the pure-Go driver, a
// listening socket in the reactor's epoll set. Started,
// it notifies its callbacks of each accepted connection, as an *IO result
// that the callback owns (Close it, or keep it). An accept that failed
// (EMFILE or ENFILE when descriptors ran out, ENOMEM) is an error result,
// one per pause: the listener stops accepting for a while, as http.Server
// does after a temporary accept error (5 ms, doubling up to 1 s until an
// accept succeeds), and then tries again; the connections wait in the
// kernel's backlog meanwhile, none is dropped. The error is a *net.OpError
// whose Temporary method says true. The listener is also a net.Listener,
// so http.Serve(l, h) works: Accept starts it. Each connection has one
// owner: the oldest Accept waiting, else the callbacks, else the queue for
// Accept (once it holds the backlog the listener stops accepting until
// one is taken; on the libuv driver the rest of that turn's batch, at most
// the backlog again, still joins it), where it waits for the next Accept or for the first
// callback that subscribes (a listener started with no callback, or
// Accept's turn passed), which gets the queued connections in order before
// the ones after them. None is dropped, none handed to two owners.
//
// The socket listens from creation. While the listener is stopped, the
// kernel's backlog holds new connections; Start takes them.
//
// A Listener is an event reference (see Lifetime in the package doc): started, it is held by its
// reactor whoever points at it; dropping a stopped one without Close is
// safe.
type Listener struct {
	handle
	e *listenEvent
}

// ListenConfig holds the options of a listening socket; the zero value is
// fine.
type ListenConfig struct {
	// Backlog is the kernel's queue of connections not yet accepted,
	// listen(2)'s backlog; 0 means 511 (libuv's and Go's usual default),
	// and a negative one the system's maximum. Linux caps it at
	// net.core.somaxconn without an error, and past it a new connection
	// waits (its SYN dropped, the client retrying).
	Backlog int
	// ReusePort sets SO_REUSEPORT before bind, so that several reactors
	// (one per core) can each listen on the same port, the kernel sharing
	// connections among them.
	ReusePort bool
}

// listenEvent is what a listener's event holds on either driver, and what
// both share: Accept's side, the counters, Info. The event is a uvListener
// (below: a libuv stream handle) or, on the pure-Go driver, a goListener
// (listener_go.go: a listening socket in the reactor's epoll set).
type listenEvent struct {
	r         *reactor.Reactor
	self      event.Event // the event
	base      *event.Base // its Base
	network   string
	transport string
	addr      net.Addr
	backlog   int
	unlink    string // the socket file to remove at close

	// Accept's side: connections no Accept took yet, and the Accepts
	// waiting (under its lock: an Accept takes or waits without the loop).
	accepts takeQueue[*IO]
	// onAcceptFn is onAccept as a function value, made once: Accept
	// hands it over (a method value made at each call allocates).
	onAcceptFn event.CallbackFunc
	// Connections libuv accepted in the turn a callback stopped the
	// listener, for the callbacks of the next Start (libuv driver).
	held []*IO

	// watch starts or stops the driver watching the socket for
	// connections. After a failed accept, accepting pauses (paused) for
	// pause, on pauseTimer (made at the first failure).
	watch      func(on bool) error
	pause      time.Duration // the last pause; 0 once an accept succeeds
	paused     bool
	pauseTimer *reactor.Timer
	// stalled: the connections queued for Accept reached the backlog, and
	// the socket is not watched until an Accept takes one (unstall).
	stalled bool

	accepted, failed atomic.Uint64
}

// The pause after a failed accept: http.Server's backoff.
const (
	acceptPauseMin = 5 * time.Millisecond
	acceptPauseMax = time.Second
)

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
	if err := reactorMade("Listen", r); err != nil {
		return nil, &net.OpError{Op: "listen", Net: network, Err: err}
	}
	ep, err := resolveEndpoint(network, address)
	if err != nil {
		return nil, &net.OpError{Op: "listen", Net: network, Err: err}
	}
	if lc.ReusePort && ep.transport != "tcp" {
		return nil, &net.OpError{Op: "listen", Net: network, Addr: ep.addr, Err: fmt.Errorf("uv: ReusePort over %s: %w", network, errInvalid)}
	}
	backlog := lc.Backlog
	if backlog == 0 {
		backlog = 511
	}
	ln := &Listener{}
	if r != nil && r.Driver() == reactor.DriverGo {
		err = listenGo(r, ln, network, ep, lc.ReusePort, backlog)
	} else {
		err = listenUV(r, ln, network, ep, lc.ReusePort, backlog)
	}
	if err != nil {
		return nil, &net.OpError{Op: "listen", Net: network, Addr: ep.addr, Err: err}
	}
	return ln, nil
}

// init sets the shared part of a listener's event, self, whose Base is
// base.
func (e *listenEvent) init(r *reactor.Reactor, self event.Event, base *event.Base, network string, ep endpoint, backlog int) {
	e.r, e.self, e.base = r, self, base
	e.network, e.transport, e.backlog = network, ep.transport, backlog
	// Accept's queue holds at most as many connections as the backlog
	// (the kernel's default, somaxconn's, when it is not positive).
	e.accepts.limit = backlog
	if backlog <= 0 {
		e.accepts.limit = 4096
	}
	unstall := e.unstall
	e.accepts.drained = func() { e.r.Post(unstall) }
	e.accepts.flusher = e.flushAccepts
	e.onAcceptFn = e.onAccept
}

func (e *listenEvent) kindName() string { return "listener" }

func (e *listenEvent) describe() string {
	return fmt.Sprintf("Listener(%s %s, accepted=%d, failed=%d)", e.network, e.addr, e.accepted.Load(), e.failed.Load())
}

// accept counts an accepted connection, or an error, and gives the
// connection to one owner: a waiting Accept, else the callbacks, else the
// queue for Accept (the listener started with no callback: it is not
// dropped, and the queue's bound holds). An error goes to every callback
// and to the oldest waiting Accept.
func (e *listenEvent) accept(c *IO, err error) {
	if err != nil {
		e.failed.Add(1)
		eventkind.Notify(e.base, nil, err)
		return
	}
	e.accepted.Add(1)
	e.pause = 0
	c.e.acceptedReady()
	if e.accepts.forCallbacks(e.base) {
		c.e.setUp(true)
		if e.accepts.notify(e.base, c) != nil {
			c.Close() // nobody got it
		}
		return
	}
	e.onAccept(e.self, c, nil)
}

// loopSetups counts the accepted connections' setups made on the loop,
// in every reactor (tests).
var loopSetups atomic.Int64

// subscribed: a callback joined; the connections queued for Accept go to
// it (eventkind.SubscriptionWatcher).
func (e *listenEvent) subscribed() { e.accepts.subscribed(e.r, false) }

// flushAccepts notifies the callbacks of the connections queued for
// Accept, oldest first, while the listener is started and has callbacks;
// the queue going below its bound ends a stall.
func (e *listenEvent) flushAccepts() {
	e.accepts.flush(e.base, e.serving, acceptedResult, func(c *IO) { c.Close() })
}

// serving reports whether the listener is started and open.
func (e *listenEvent) serving() bool {
	return eventkind.LoopRefs(e.self) > 0 && !e.self.Flags().Has(event.Closed)
}

// acceptedResult is a queued connection as the callbacks see it: set up
// by the loop, its setup taken back from the Accept it was handed to
// (forCallbacks).
func acceptedResult(c *IO) any {
	c.e.forCallbacks()
	return c
}

// armAccept starts watching the socket, unless accepting is paused: the
// pause's end starts it. The connections queued for Accept go to the
// callbacks, if it has some, from the next turn.
func (e *listenEvent) armAccept() error {
	e.subscribed()
	if e.paused || e.stalled {
		return nil
	}
	return e.watch(true)
}

// acceptFailed pauses accepting after a failed accept (cause is the system
// call's error) and reports it, once: the driver watches the socket again
// when the pause ends (resume).
func (e *listenEvent) acceptFailed(cause error) {
	e.watch(false)
	e.pause = min(max(2*e.pause, acceptPauseMin), acceptPauseMax)
	err := &net.OpError{Op: "accept", Net: e.network, Addr: e.addr, Err: &pausedError{cause, e.pause}}
	if terr := e.startPause(); terr != nil {
		// No timer (the reactor is closing): the error stands alone.
		err.Err = fmt.Errorf("%w (and no pause: %v)", cause, terr)
	}
	e.accept(nil, err)
}

// startPause starts the pause's timer, a hidden one: the listener is what
// keeps Run going.
func (e *listenEvent) startPause() error {
	if e.pauseTimer == nil {
		tm, err := e.r.NewTimer(e.pause, 0)
		if err != nil {
			return err
		}
		tm.SetHidden(true)
		if _, err := event.Subscribe(tm, func(_ event.Event, _ any, err error) {
			if err == nil {
				e.resume()
			}
		}); err != nil {
			tm.Close()
			return err
		}
		e.pauseTimer = tm
		if err := tm.Start(); err != nil {
			return err
		}
	} else if err := e.pauseTimer.Reset(e.pause); err != nil { // starts it again
		return err
	}
	e.paused = true
	return nil
}

// resume ends a pause: a started, open listener watches its socket again
// (a stopped one does at its next Start).
func (e *listenEvent) resume() {
	e.paused = false
	if e.stalled || eventkind.LoopRefs(e.self) == 0 || e.self.Flags().Has(event.Closed) {
		return
	}
	if err := e.watch(true); err != nil {
		e.acceptFailed(err)
	}
}

// A pausedError is the error of a failed accept after which accepting
// paused: it is temporary (net.Error), as http.Serve's backoff expects, and
// matches the system call's error (errors.Is: syscall.EMFILE).
type pausedError struct {
	err   error
	pause time.Duration
}

func (p *pausedError) Error() string {
	return fmt.Sprintf("%v (accepting paused for %v)", p.err, p.pause)
}

func (p *pausedError) Unwrap() error { return p.err }

// Temporary reports true: the listener tries again after the pause.
func (p *pausedError) Temporary() bool { return true }

// Timeout reports false.
func (p *pausedError) Timeout() bool { return false }

// socketFile is the file of a Unix socket bound at addr, which Close
// removes as package net does; "" for TCP, and for an abstract name
// (beginning with '@', x/sys's convention), which has no file.
func socketFile(ep endpoint, addr net.Addr) string {
	if ep.transport != "unix" || addr == nil || strings.HasPrefix(addr.String(), "@") {
		return ""
	}
	return addr.String()
}

// closing ends the Accepts waiting, closes the connections queued for
// Accept, and removes a Unix socket's file.
func (e *listenEvent) closing() {
	if e.unlink != "" {
		os.Remove(e.unlink)
		e.unlink = ""
	}
	for _, c := range append(e.accepts.close(), e.held...) {
		c.Close()
	}
	e.held = nil
	if e.pauseTimer != nil {
		e.pauseTimer.Close()
		e.pauseTimer = nil
	}
	e.paused, e.stalled = false, false
}

// onAccept is Accept's subscription: a connection goes to the first Accept
// waiting, or to the queue.
func (e *listenEvent) onAccept(_ event.Event, res any, err error) {
	c, _ := res.(*IO)
	if c != nil && e.accepts.passing {
		return // the callbacks own it
	}
	if c == nil && isClosed(err) {
		return // closing tells the waiters
	}
	if c != nil {
		c.e.readyForBlocking() // Accept's connections are read and written by blocking calls
	}
	// An accept error nobody waits for is counted in Info.
	if !e.accepts.hand(c, err) && c != nil {
		c.Close() // the listener closed: nobody will take it
		return
	}
	if c != nil && e.accepts.callbacks(e.base) > 0 {
		// Queued while callbacks are there (the Accept it was routed
		// to withdrew meanwhile, or a flush to them is due): it goes
		// to them, not to an Accept that may never come.
		e.subscribed()
	}
	if c != nil && !e.stalled && e.accepts.atLimit() {
		// As many connections wait for Accept as the backlog lets wait
		// in the kernel: the next ones wait there, until an Accept
		// takes one of these.
		e.stalled = true
		e.watch(false)
	}
}

// unstall watches the socket again once an Accept took a connection from
// a queue that had reached its bound (takeQueue.drained), unless accepting
// is paused or the listener stopped or closed meanwhile.
func (e *listenEvent) unstall() {
	if !e.stalled {
		return
	}
	e.stalled = false
	if !e.paused { // else the pause's end watches again
		e.resume()
	}
}

// AcceptIO waits for the next connection (or ctx's end) and returns it. It
// starts the listener the first time. Not on the loop goroutine. A nil ctx
// is refused with an error matching event.ErrNilContext. The connection is
// made ready for blocking calls: its first Read and Write go to the socket
// from the caller's goroutine, through its read and write lanes (see
// docs/io.md), and it reads nothing ahead of its Reads. As the reactor
// closes, it may return, with a nil error, a connection that close has
// closed already (its addresses kept): its calls fail as a closed
// connection's do, and the peer reads its end; no accepted connection is
// dropped unseen.
func (l *Listener) AcceptIO(ctx context.Context) (*IO, error) {
	if l == nil || l.e == nil {
		return nil, errZero("Listener")
	}
	e := l.e
	if ctx == nil {
		// Refused before a waiter is queued: one left by a panic on
		// ctx.Done() would take the next connection to nobody.
		return nil, &net.OpError{Op: "accept", Net: e.network, Addr: e.addr, Err: event.ErrNilContext}
	}
	if e.r.Owner().Owned() {
		return nil, fmt.Errorf("uv: Accept: %w", event.ErrOnLoop)
	}
	c, err := e.accepts.wait(ctx, e.r, e.self, e.onAcceptFn)
	if err != nil {
		return nil, &net.OpError{Op: "accept", Net: e.network, Addr: e.addr, Err: err}
	}
	c.e.makeAcceptedLane() // here, not on the loop, as net's Accept makes its netFD
	return c, nil
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
func (l *Listener) Addr() net.Addr {
	if l == nil || l.e == nil {
		return nil
	}
	return l.e.addr
}
