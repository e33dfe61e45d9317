package uv

import (
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
)

// This file makes an IO a net.Conn: its errors, deadlines and addresses,
// with the net package's documented semantics.

// ErrClosed is the error of an operation on a closed IO or Listener, or one
// that was waiting when it closed. It matches net.ErrClosed and
// event.ErrClosed with errors.Is.
var ErrClosed error = closedError{}

type closedError struct{}

func (closedError) Error() string { return "use of closed network connection" }

func (closedError) Is(target error) bool {
	return target == net.ErrClosed || target == event.ErrClosed
}

// errTimeout is what an operation past its deadline fails with, wrapped in
// a *net.OpError by the net.Conn methods: Timeout() is true, and
// errors.Is(err, os.ErrDeadlineExceeded) holds.
var errTimeout = os.ErrDeadlineExceeded

var errInvalid = syscall.EINVAL

// errZero is the error of a method called on a zero value of the named
// type (or a nil pointer): no constructor made it, so it stands for no
// event (architecture §2, rule 11).
func errZero(typ string) error {
	return fmt.Errorf("uv: a zero %s (not made by a constructor): %w", typ, event.ErrNilEvent)
}

// zero reports an IO no constructor made.
func (c *IO) zero() bool { return c == nil || c.e == nil }

var _ net.Conn = (*IO)(nil)

// opError wraps err as the net package does for a connection's operations.
func (c *IO) opError(op string, err error) error {
	if _, ok := err.(*net.OpError); ok {
		return err
	}
	src, dst := c.e.addrs.get(c.e)
	return &net.OpError{Op: op, Net: c.e.netName(), Source: src, Addr: dst, Err: err}
}

// LocalAddr returns the local address (nil when it cannot be known).
func (c *IO) LocalAddr() net.Addr {
	if c.zero() {
		return nil
	}
	a, _ := c.e.addrs.get(c.e)
	return a
}

// RemoteAddr returns the peer's address (nil when it cannot be known). A
// TCP connection keeps it once the peer has reset it, as package net's
// do.
func (c *IO) RemoteAddr() net.Addr {
	if c.zero() {
		return nil
	}
	_, b := c.e.addrs.get(c.e)
	return b
}

// addrCache holds a connection's addresses once read: they do not change.
// No lock is held while they are read on the loop (a loop describing the
// IO meanwhile must not wait for a caller that waits for the loop): two
// first readers may both read them, which is harmless.
type addrCache struct {
	p atomic.Pointer[[2]net.Addr]
}

func (a *addrCache) get(e *ioEvent) (local, remote net.Addr) {
	if a.p.Load() == nil {
		e.exec(func() { a.read(e) })
	}
	if v := a.p.Load(); v != nil {
		return v[0], v[1]
	}
	return nil, nil
}

// setPair fills the cache with an accepted TCP connection's addresses,
// read as it was accepted, both in p (one allocation).
func (a *addrCache) setPair(p *tcpAddrPair) { a.p.Store(&p.pair) }

// read reads the addresses into the cache while the connection is open,
// unless they are there already (a listener set them as it accepted the
// connection). On the loop.
func (a *addrCache) read(e *ioEvent) {
	if a.p.Load() == nil && e.t.open() && !e.closed {
		local, remote := e.t.addresses()
		a.p.Store(&[2]net.Addr{local, remote})
	}
}

// describe gives "local->remote" for Info, or "" when the transport has
// no addresses (a terminal).
func (a *addrCache) describe(e *ioEvent) string {
	l, r := a.get(e)
	if l == nil && r == nil && e.transport == "tty" {
		return ""
	}
	return addrString(l) + "->" + addrString(r)
}

func addrString(a net.Addr) string {
	if a == nil {
		return "?"
	}
	return a.String()
}

// SetDeadline sets the read and write deadlines: see net.Conn.
func (c *IO) SetDeadline(t time.Time) error {
	return c.setDeadline(t, true, true)
}

// SetReadDeadline bounds the Reads (and read requests) waiting now and to
// come: past t they fail with an error matching os.ErrDeadlineExceeded
// whose Timeout() is true. A zero t removes the deadline.
func (c *IO) SetReadDeadline(t time.Time) error { return c.setDeadline(t, true, false) }

// SetWriteDeadline bounds the Writes waiting now and to come, as
// SetReadDeadline the reads. A Write that timed out returns n, and exactly
// p[:n] goes out: retrying p[n:] sends no byte twice. Send and WriteAsync
// are not bounded by it.
func (c *IO) SetWriteDeadline(t time.Time) error { return c.setDeadline(t, false, true) }

func (c *IO) setDeadline(t time.Time, read, write bool) error {
	if c.zero() {
		return errZero("IO")
	}
	e := c.e
	if done, err := e.deadlineOffLoop(t, read, write); done {
		if err != nil {
			return c.opError("set deadline", err)
		}
		return nil
	}
	err := e.do(func() error {
		if read {
			if err := e.setReadDeadline(t); err != nil {
				return err
			}
			e.openReadLane() // shut while the deadline had passed
		}
		if write {
			if err := e.dl.write.set(e.r, e.deadlineTimer(1), t, e.writeTimedOut); err != nil {
				return err
			}
			e.openLane() // shut while the deadline had passed
		}
		return nil
	})
	if err != nil {
		return c.opError("set deadline", err)
	}
	return nil
}

// deadlineOffLoop makes, on the caller's goroutine, the deadline changes
// that need no wait for the loop, and reports whether it made this one:
//   - removing deadlines none of which is set (net/http removes the read
//     deadline several times per request);
//   - off the loop: removing a read deadline that passed (its timer has
//     fired or is stopped: nothing is armed), and setting one in the past,
//     which publishes the passed deadline at once (a Read from now on
//     fails, a Read of the read lane too) and, when Reads are parked on
//     the loop, queues their failing there without waiting for it.
//     net/http's abortPendingRead does both per request.
//
// The loop orders a queued failing before every call made after it; a
// caller racing another's change to the same deadline gets one of the two
// orders, as with any two calls at once.
func (e *ioEvent) deadlineOffLoop(t time.Time, read, write bool) (bool, error) {
	if t.IsZero() && (!read || e.dl.read.at.Load() == 0) && (!write || e.dl.write.at.Load() == 0) {
		return true, nil // a closed IO's are closedDeadline: the loop refuses
	}
	if write || e.r.Owner().Owned() {
		return false, nil
	}
	if t.IsZero() {
		return e.removePassedReadDeadline(), nil
	}
	if t.After(longAgo) && time.Until(t) > 0 {
		return false, nil // a timer to arm: the loop's
	}
	if !e.passReadDeadline() {
		return false, nil
	}
	if e.parked.Load() == 0 {
		// No Read parked on the loop (a Read of the read lane has the
		// deadline already; one on its way to the loop finds it passed):
		// the loop need not be woken. A timer armed for a deadline this
		// one replaced finds, when it fires, nothing to do.
		return true, nil
	}
	if err := e.post(e.readPassed); err != nil {
		return true, err
	}
	return true, nil
}

// longAgo is a deadline that passed on any clock set after the first
// second of 1970 (net/http's aLongTimeAgo): one at or before it is known
// to have passed without reading the clock, which a deadline removed
// costs nothing and one set in the past costs one reading, the lane
// file's (net's cost).
var longAgo = time.Unix(1, 0)

// removePassedReadDeadline removes, off the loop, a read deadline that
// passed (its timer has fired or is stopped: nothing is armed), and the
// read lane's with it; false when the deadline had not passed (the loop
// removes it).
func (e *ioEvent) removePassedReadDeadline() bool {
	e.dl.lane.Lock()
	if !e.dl.read.at.CompareAndSwap(pastDeadline, 0) {
		e.dl.lane.Unlock()
		return false
	}
	l := e.rlane.Load()
	if l != nil {
		l.f.SetReadDeadline(time.Time{})
	}
	e.dl.lane.Unlock()
	if l != nil && l.state.Load() == rlaneShut {
		e.post(e.openReadLane) // shut while the deadline had passed (rare): the loop opens it
	}
	return true
}

// passReadDeadline makes the read deadline pass, off the loop, and the
// read lane's with it; false when the IO closed (the loop refuses).
func (e *ioEvent) passReadDeadline() bool {
	d := &e.dl.read
	e.dl.lane.Lock()
	for {
		at := d.at.Load()
		if at == closedDeadline || at == pastDeadline {
			e.dl.lane.Unlock()
			// Passed: whoever made it pass failed or will fail the Reads.
			return at == pastDeadline
		}
		if d.at.CompareAndSwap(at, pastDeadline) {
			e.setLaneReadDeadline(longAgo)
			e.dl.lane.Unlock()
			return true
		}
	}
}

// readPassed fails the parked Reads of a read deadline set in the past off
// the loop (deadlineOffLoop). On the loop.
func (e *ioEvent) readPassed() {
	if e.closed {
		return
	}
	if x := e.rare.Load(); x != nil && x.timers[0] != nil && e.dl.read.at.Load() <= 0 {
		x.timers[0].Stop() // armed for the deadline replaced; not for one set since
	}
	e.readTimedOut()
}

// deadlines are an IO's read and write deadlines, each on a reactor timer
// kept with the IO's rare state (ioRare.timers): most IOs never set one.
type deadlines struct {
	read, write deadline
	// lane orders the read deadline's changes with the read lane's file's
	// (io_readlane.go): each change of read.at by a setter, on the loop
	// or off it, and the lane file's deadline set after it are one step
	// under lane, so that two setters at once leave the file the deadline
	// the IO has; the lane is made under it too. (The timer's own change,
	// a deadline T to passed, and the close's are not: the file has T
	// already, and a closed file takes no deadline.)
	lane sync.Mutex
}

// deadlineTimer is where the timer of the read (0) or write (1) deadline
// is kept. On the loop.
func (e *ioEvent) deadlineTimer(i int) **reactor.Timer { return &e.extra().timers[i] }

// closeDeadlines closes both deadlines and their timers.
func (e *ioEvent) closeDeadlines() {
	var tms [2]*reactor.Timer
	x := e.rare.Load()
	if x != nil {
		tms = x.timers
		x.timers = [2]*reactor.Timer{}
	}
	e.dl.read.close(&tms[0])
	e.dl.write.close(&tms[1])
}

// deadline is one direction's deadline, on a periodic reactor timer (so
// that it can be restarted) stopped by its own firing, which its owner
// keeps and hands to set and close. Loop-owned.
type deadline struct {
	// at is the deadline in Unix nanoseconds; 0: none; pastDeadline once
	// it passed; closedDeadline once the IO closed. Written on the loop,
	// and off it by deadlineOffLoop (from pastDeadline to 0, and from any
	// but closedDeadline to pastDeadline); read off the loop by it too.
	at atomic.Int64
}

// A deadline's at once it passed, and once its IO closed.
const (
	pastDeadline   = -1
	closedDeadline = -2
)

// farthestDeadline is the last time a deadline's at can hold (UnixNano
// of math.MaxInt64, in 2262): a later deadline is held as this one.
var farthestDeadline = time.Unix(0, math.MaxInt64)

// expired reports that the deadline passed.
func (d *deadline) expired() bool { return d.at.Load() == pastDeadline }

// time is the deadline set: zero for none, long ago once it passed.
func (d *deadline) time() time.Time {
	switch at := d.at.Load(); at {
	case 0, closedDeadline:
		return time.Time{}
	case pastDeadline:
		return longAgo
	default:
		return time.Unix(0, at)
	}
}

// set arms the deadline for t on the timer *tm (made at the first
// deadline to arm); expire runs on the loop when it passes.
func (d *deadline) set(r *reactor.Reactor, tm **reactor.Timer, t time.Time, expire func()) error {
	if *tm != nil {
		(*tm).Stop()
	}
	d.at.Store(0)
	if t.IsZero() {
		return nil
	}
	wait := time.Until(t)
	if wait <= 0 {
		d.at.Store(pastDeadline)
		expire()
		return nil
	}
	at := int64(math.MaxInt64) // past 2262 UnixNano overflows: the deadline is the farthest it can say
	if t.Before(farthestDeadline) {
		at = max(t.UnixNano(), 1)
	}
	d.at.Store(at)
	if *tm == nil {
		nt, err := r.NewTimer(wait, time.Hour)
		if err != nil {
			return err
		}
		nt.SetHidden(true) // bookkeeping: it keeps no Run going
		if _, err := event.Subscribe(nt, func(ev event.Event, _ any, _ error) {
			ev.Stop()
			// A deadline removed or made to pass off the loop since the
			// timer was armed leaves it stale (deadlineOffLoop).
			if at := d.at.Load(); at > 0 && d.at.CompareAndSwap(at, pastDeadline) {
				expire()
			}
		}); err != nil {
			return err
		}
		*tm = nt
		return nt.Start()
	}
	return (*tm).Reset(wait) // starts it again if it fired or was stopped
}

// close closes the deadline and its timer *tm.
func (d *deadline) close(tm **reactor.Timer) {
	d.at.Store(closedDeadline) // removing or setting it then goes to the loop, which refuses
	if *tm != nil {
		(*tm).Close()
		*tm = nil
	}
}

// setReadDeadline sets the read deadline on the loop, and the read lane's
// wait gets it in the same step (dl.lane): set from each caller after its
// loop part, two callers at once could leave the earlier call's.
//
// A deadline set in the past fails the parked reads after the lock is let
// go: failing them completes their futures, whose subscribers run now and
// may set the deadline again.
func (e *ioEvent) setReadDeadline(t time.Time) error {
	inSet, passed := true, false
	expire := func() {
		if inSet {
			passed = true // set in the past: failed below, unlocked
			return
		}
		e.readTimedOut() // the timer's, when it fires
	}
	e.dl.lane.Lock()
	err := e.dl.read.set(e.r, e.deadlineTimer(0), t, expire)
	inSet = false
	if err == nil {
		e.setLaneReadDeadline(e.dl.read.time())
	}
	e.dl.lane.Unlock()
	if passed {
		e.readTimedOut()
	}
	return err
}

// readTimedOut fails the parked reads: the read deadline passed.
func (e *ioEvent) readTimedOut() {
	// A Read of the read lane is left alone: its wait in the netpoller has
	// the same deadline, which fails it and every lane Read after it.
	for len(e.readers) > 0 {
		e.popReader().finish(0, errTimeout)
	}
	e.updateReading()
}

// isClosed reports whether err says the IO or its reactor closed.
func isClosed(err error) bool {
	return errors.Is(err, net.ErrClosed) || errors.Is(err, event.ErrClosed) || errors.Is(err, reactor.ErrReactorClosed)
}

// netName is the network errors name: the one dialled or listened on, as
// net.OpError's Net is for a net.Conn, or the transport.
func (e *ioEvent) netName() string {
	switch {
	case e.transport != "tcp":
	case e.ipv == 4:
		return "tcp4"
	case e.ipv == 6:
		return "tcp6"
	}
	return e.transport
}

// setNetwork records the network dialled or listened on (netName): only
// tcp4 and tcp6 name more than the transport, in a byte (ioEvent is kept
// within its size class).
func (e *ioEvent) setNetwork(network string) {
	switch network {
	case "tcp4":
		e.ipv = 4
	case "tcp6":
		e.ipv = 6
	}
}
