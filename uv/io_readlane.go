package uv

import (
	"errors"
	"io"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/reactor"
)

// This file is an IO's read lane, on both drivers: a blocking Read
// made off the loop while the loop holds nothing of the reading side does
// its non-blocking read(2) on the caller's goroutine and, when there is
// nothing to read, waits in Go's netpoller for the descriptor, as package
// net's Read does: one goroutine wake-up per read, none through the loop.
//
// The lane is open only while the loop is not reading: the IO not
// started, no Read or read request parked on the loop, no bytes kept, the
// stream not ended or failed, the read deadline not passed, the IO open.
// (A lane Read that timed out leaves the lane open: the file has the same
// deadline, which fails the Reads after it as the loop would.)
// With a read lane the loop reads ahead for nobody: what no one asks for
// stays in the kernel's buffer, where the lane's next Read finds it. When
// the loop must read (a Start, a read request, a Read that found the lane
// taken) while a caller holds the lane, it does not wait: it marks the
// lane wanted, and the caller, once its read is done, gives the lane back
// and asks the loop to look again. Close wakes a caller waiting in the
// netpoller (the descriptor's os.File is closed, and with it the
// descriptor once no read is in flight).
//
// The lane's file is closed by the goroutine whose Close closes the IO,
// when one does (closeHandedBack, handBack), not by the loop: the close of
// a socket's last descriptor is where the kernel ends the connection (a
// FIN, a reset), work package net has each connection's goroutine do, and
// which the loop would otherwise do for every connection a server closes,
// in turn.

// The read lane's states.
const (
	rlaneShut   int32 = iota // the loop owns the reading side
	rlaneOpen                // idle: a caller may take it
	rlaneBusy                // a caller reads, or waits in the netpoller to
	rlaneWanted              // busy, and the loop waits to read
	rlaneFailed              // a read(2) of the lane failed, or its file cannot wait (publishReadLane): the loop owns the reading side for good
)

// readLane is an IO's read lane: its state and the descriptor's
// os.File, through which a caller waits in the netpoller. It is made (and
// published, never changed) at the connection's first blocking Read, or,
// for a connection Accept takes, by its goroutine before Accept returns.
type readLane struct {
	state atomic.Int32
	// closer: whether the file's close is handed to the goroutine that
	// closes the IO (handBack).
	closer atomic.Int32
	f      *os.File
	rc     syscall.RawConn
	// The read in flight, held by the caller holding the lane (busy):
	// its buffer, what read(2) gave (Linux's read(2) gives at most
	// 2 GiB less a page), and the read as the function the netpoller's
	// wait calls, made once with the lane, so that a Read allocates
	// nothing. (One function for both kinds of read, wait telling them
	// apart: a lane is 96 bytes, one allocation less.)
	p []byte
	n int32
	// wait: the read in flight waits in the netpoller for bytes.
	wait   bool
	err    error
	readFn func(fd uintptr) bool
	// release closes a duplicate descriptor's file and gives back its
	// place in the budget (io_uv.go), or an unopened connection's socket
	// (io_lazy_uv.go); nil for the descriptor itself.
	release *lazySock
}

// Who closes the lane's file when the IO closes (closer). Loop-owned (an
// atomic only for the tests' look from another goroutine).
const (
	closerNone   int32 = iota // the loop closes it: no Close is closing the IO on the loop now
	closerWaits               // a Close runs on the loop now (closeHandedBack): if it closes the IO, the file is its caller's to close
	closerHanded              // that Close closed the IO, and the loop left the file to its caller
)

// handBack leaves the lane's file to the caller of the Close that is
// closing the IO on the loop now (closeHandedBack); false when the IO
// closes otherwise (the reactor's close, the collector's cleanup, a
// Dispose, a Close from within one of the IO's callbacks, whose event lets
// go once the callbacks' pass is over), and the loop closes it. On the
// loop, at the IO's close.
func (l *readLane) handBack() bool {
	return l.closer.CompareAndSwap(closerWaits, closerHanded)
}

// closeFile closes the lane's file: the descriptor (pure-Go driver) or its
// duplicate (libuv's, with its bookkeeping: release).
func (l *readLane) closeFile() {
	if l.release != nil {
		l.release.Close()
	} else {
		l.f.Close()
	}
}

// laneClose is IO.Close of an IO with a read lane (closeHandedBack), as
// one function for the loop to run (fn, made once: the records are kept
// in laneCloses, so that a Close allocates none).
type laneClose struct {
	l   *readLane
	h   *handle // the IO's: its Close closes the event and gives up the reference
	err error
	ran bool
	// handed: the close closed the IO and the loop left the file to the
	// caller.
	handed bool
	fn     func() // run
}

// laneCloses keeps the laneClose records of the Closes that ended.
var laneCloses = sync.Pool{New: func() any {
	c := new(laneClose)
	c.fn = c.run
	return c
}}

func (c *laneClose) run() {
	c.ran = true
	if c.l.closer.Load() != closerNone {
		// Closed already (the file was handed to an earlier Close), or
		// a Close from a callback of this very close: nothing to close.
		c.err = c.h.Close()
		return
	}
	c.l.closer.Store(closerWaits)
	defer func() {
		// Not handed: the IO closed otherwise, or closes later (a Close
		// from within one of its callbacks), and the loop closes the
		// file then.
		c.handed = !c.l.closer.CompareAndSwap(closerWaits, closerNone)
	}()
	c.err = c.h.Close()
}

// closeHandedBack is IO.Close with the lane's file handed back: the
// handle's Close runs on the loop in one step, and when it is what closes
// the IO there, the loop leaves the file (handBack), and the caller closes
// it before Close returns: on its own goroutine, the kernel's end of the
// connection is paid there, not on the loop; on the loop (a callback's
// Close), there, as the loop would have. The file goes to the Close that
// closed the IO, never to one still queued behind the loop's work, so the
// Close that closes the IO returns once the connection has ended, wherever
// it was made and whoever else closes it meanwhile (another Close of it at
// the same time may return first, as a second Close of a net.Conn does).
// (One round trip to the loop for the close and the reference given up,
// where the handle's Close makes one for each.)
func (l *readLane) closeHandedBack(r *reactor.Reactor, h *handle) error {
	c := laneCloses.Get().(*laneClose)
	c.l, c.h = l, h
	x := r.Call(c.fn)
	ran, handed, err := c.ran, c.handed, c.err
	if x == nil {
		// The loop ran it and is done with it (a Call that failed may
		// not say so: that record is left to the collector).
		*c = laneClose{fn: c.fn}
		laneCloses.Put(c)
	}
	if handed {
		l.closeFile()
	}
	if x != nil {
		if !ran {
			// The loop refused it (the reactor is closed, and the IO
			// with it; or this is another reactor's loop): the handle's
			// Close answers as it does.
			return h.Close()
		}
		return x
	}
	return err
}

// reader returns the lane's read(2) into p, for the netpoller's wait:
// false when there is nothing to read yet and the read waits (without
// wait, one read(2), whatever it gives). (Package syscall's Read, as
// net's: x/sys's goes through one more call to reach it. A function
// literal, not the method value of a method: that would put one more
// call between the system call and the Read.)
func (l *readLane) reader() func(fd uintptr) bool {
	return func(fd uintptr) bool {
		for {
			var n int
			n, l.err = syscall.Read(int(fd), l.p)
			l.n = int32(n)
			if l.err != unix.EINTR {
				return l.err != unix.EAGAIN || !l.wait
			}
		}
	}
}

// readLaner is a transport that can give a read lane its file: a socket
// (TCP or Unix) of either driver.
type readLaner interface {
	// laneFile returns the descriptor (the pure-Go driver's own, from
	// now on the file's to close; release nil) or a duplicate of it
	// (libuv's, which release closes, before libuv closes its own) as an
	// os.File in Go's netpoller; nil when it cannot be made.
	laneFile() (f *os.File, release *lazySock)
	// laneFileAnywhere reports whether laneFile reads nothing the loop
	// may change, and writes only what the loop reads after
	// settleLaneMaking, while nobody else holds the IO: it may then run
	// on another goroutine. On the loop.
	laneFileAnywhere() bool
}

// setReadLane gives the read lane its file, on the loop, when the first
// blocking Read of a connection comes to it: an IO read only by its
// callbacks or requests never has one (nor its cost: the file, and the
// descriptor's place in the netpoller). One whose making was handed to
// Accept's goroutine has it (or cannot have one) already.
func (e *ioEvent) setReadLane() {
	if !e.settleLaneMaking() {
		return
	}
	rl := e.laneMaker()
	if rl == nil {
		return
	}
	e.laneMaking.Store(laneMakingTried)
	f, release := rl.laneFile()
	if f == nil {
		return
	}
	loopLaneFiles.Add(1)
	e.publishReadLane(f, release, false)
	e.updateReading() // reading ahead ends: the lane reads from now on
	e.openReadLane()
}

// publishReadLane makes f the read lane's file (release: laneFile's),
// open at once when open says so (a connection nobody but its Accept's
// goroutine holds yet: nothing of the loop's reads it). A file Go's
// netpoller does not hold (os.NewFile could not register the descriptor:
// its deadline is refused with os.ErrNoDeadline) cannot wait for bytes:
// its lane is published failed, never opened, and the loop reads; the
// file still owns what it owns, and closes it at the IO's close.
func (e *ioEvent) publishReadLane(f *os.File, release *lazySock, open bool) {
	rc, err := f.SyscallConn()
	if err != nil { // only for a nil or closed file: never this one
		panic("uv: the read lane's file: " + err.Error())
	}
	e.dl.lane.Lock() // a setter off the loop sees the lane, or the file gets its deadline here
	err = f.SetReadDeadline(e.dl.read.time())
	l := &readLane{f: f, rc: rc, release: release}
	l.readFn = l.reader()
	switch {
	case errors.Is(err, os.ErrNoDeadline):
		l.state.Store(rlaneFailed)
	case open:
		l.state.Store(rlaneOpen)
	}
	e.rlane.Store(l)
	e.dl.lane.Unlock()
}

// laneMaker returns the IO's transport when the IO can have a read lane
// now (open, its descriptor known: a socket's); nil when it cannot. On
// the loop.
func (e *ioEvent) laneMaker() readLaner {
	if e.closed || !e.t.open() || e.lane.fd1 == 0 {
		return nil
	}
	rl, _ := e.t.(readLaner)
	return rl
}

// loopLaneFiles counts the read lane files made on the loop, in every
// reactor (tests).
var loopLaneFiles atomic.Int64

// newLaneFile makes fd, a non-blocking socket, a read lane's os.File:
// os.NewFile puts it in Go's netpoller, unless the netpoller cannot take
// it (publishReadLane hears so).
func newLaneFile(fd int, name string) *os.File {
	if mk := laneFileMaker.Load(); mk != nil {
		return (*mk)(fd, name)
	}
	return os.NewFile(uintptr(fd), name)
}

// laneFileMaker, when set, makes the read lanes' files in os.NewFile's
// place (tests: a file the netpoller does not hold).
var laneFileMaker atomic.Pointer[func(fd int, name string) *os.File]

// Whether the read lane was made, and who makes that of a connection
// Accept takes (ioEvent's laneMaking). The file (os.NewFile: the descriptor's place in Go's
// netpoller, the file's cleanup) is the costliest part of a
// connection's making: the goroutine of the Accept that takes the
// connection makes it, as package net's accepting goroutine makes its
// netFD, not the loop, which accepts the connection and makes its IO. Until it is taken, the loop
// may take the making back: at the connection's close, or at its first
// blocking Read when a callback got it instead of an Accept (the state
// is then laneMakingNone again).
const (
	laneMakingNone  int32 = iota // not made: the loop's, at the first blocking Read (setReadLane)
	laneMakingTried              // made, or found impossible, by the loop
	laneMakingDue                // handed to the Accept that takes the connection
	laneMakingOn                 // that Accept's goroutine makes it now: the loop waits for it
	laneMakingDone               // made, or found impossible, by that goroutine
	laneMakingBack               // the loop takes it back now (settleLaneMaking): that Accept waits for it
)

// handLaneMaking hands the making of the read lane to the goroutine of
// the Accept that takes the connection (makeAcceptedLane), when its
// transport can make the file off the loop; false when it cannot. On
// the loop, before the connection is handed over.
func (e *ioEvent) handLaneMaking() bool {
	rl := e.laneMaker()
	if rl == nil || e.laneMaking.Load() != laneMakingNone || !rl.laneFileAnywhere() {
		return false
	}
	e.laneMaking.Store(laneMakingDue)
	return true
}

// makeAcceptedLane makes the read lane whose making the loop handed over
// (handLaneMaking), unless the loop took it back; open, since nobody but
// the caller holds the connection yet. By the goroutine of the Accept
// that took the connection, before Accept returns it.
func (e *ioEvent) makeAcceptedLane() {
	for {
		switch e.laneMaking.Load() {
		case laneMakingDue:
			if e.laneMaking.CompareAndSwap(laneMakingDue, laneMakingOn) {
				e.makeBegunLane()
				return
			}
		case laneMakingBack:
			// The loop takes it back (the connection's close) and keeps
			// its addresses (keepAddrs): they are there when Accept
			// returns it. A wait as bounded as settleLaneMaking's.
			runtime.Gosched()
		default:
			return
		}
	}
}

// makeBegunLane is makeAcceptedLane's making, begun (laneMakingOn), with
// the connection's setup.
func (e *ioEvent) makeBegunLane() {
	e.setUp(false)
	if f, release := e.t.(readLaner).laneFile(); f != nil {
		e.publishReadLane(f, release, true)
	}
	e.laneMaking.Store(laneMakingDone)
}

// settleLaneMaking takes back a read lane's making handed to an Accept
// that has not begun it (with the connection's setup, whose addresses it
// keeps: keepAddrs, before that Accept may return the connection), or
// waits for one begun, so that the loop sees
// the lane as it is before it looks at it or makes it. It reports whether
// the lane is the loop's to make. On the loop. This is the one place the
// loop waits for another goroutine; the wait is bounded: the making is a
// few system calls (laneFile's fcntl, the netpoller's epoll_ctl) on a
// goroutine that waits for nothing meanwhile but the deadlines' lock,
// which no holder keeps across a wait.
func (e *ioEvent) settleLaneMaking() bool {
	for {
		switch e.laneMaking.Load() {
		case laneMakingNone:
			return true
		case laneMakingTried, laneMakingDone:
			return false
		case laneMakingDue:
			if e.laneMaking.CompareAndSwap(laneMakingDue, laneMakingBack) {
				e.keepAddrs() // before the Accept the connection may be handed to returns it
				e.laneMaking.Store(laneMakingNone)
				return true // the loop makes it, at the first blocking Read
			}
		default:
			laneMakingWaits.Add(1)
			runtime.Gosched()
		}
	}
}

// laneMakingWaits counts settleLaneMaking's yields to a making begun, in
// every reactor (tests).
var laneMakingWaits atomic.Int64

// readyForBlocking makes a connection's read lane (or hands its making
// to the goroutine of the Accept that takes it: handLaneMaking) and puts its write lane
// in use before it is handed to AcceptIO: a connection taken by Accept
// (net.Listener's) is read and written by blocking calls, so its first
// Read and its first Write go to the socket from the caller's goroutine,
// with no round trip through the loop (which a connection that makes one
// request, as net/http's without keep-alive, would pay on each). Its
// addresses are read too (unless the listener read them as it accepted
// it), as net's Accept reads them: LocalAddr and RemoteAddr (net/http asks
// both of every connection) then make no round trip either. On the loop.
func (e *ioEvent) readyForBlocking() {
	if e.pair == nil {
		e.addrs.read(e) // else the setup has them
	}
	if !e.handLaneMaking() {
		e.setUp(true)
		e.setReadLane()
	}
	e.useLane()
	e.openLane()
}

// openReadLane opens the read lane when the loop holds nothing of the
// reading side. On the loop.
func (e *ioEvent) openReadLane() {
	l := e.rlane.Load()
	if l == nil || l.state.Load() != rlaneShut || e.closed || !e.t.open() ||
		e.delivering() || e.reading || len(e.readers) > 0 || len(e.chunks) > 0 || e.rerr != nil || e.dl.read.expired() ||
		!e.t.readsSettled() {
		return
	}
	l.state.Store(rlaneOpen)
}

// shutReadLane takes the reading side back for the loop; false when a
// caller holds the lane (it is marked wanted: the caller gives it back and
// asks the loop to look again). On the loop.
func (e *ioEvent) shutReadLane() bool {
	l := e.rlane.Load()
	return l == nil || shutLaneState(&l.state)
}

// shutLaneState takes a read lane (an IO's, a UDP's) in state back for
// the loop; false when a caller holds it, which it marks wanted. On the
// loop.
func shutLaneState(state *atomic.Int32) bool {
	for {
		switch state.Load() {
		case rlaneShut, rlaneFailed:
			return true
		case rlaneOpen:
			if state.CompareAndSwap(rlaneOpen, rlaneShut) {
				return true
			}
		case rlaneBusy:
			if state.CompareAndSwap(rlaneBusy, rlaneWanted) {
				return false
			}
		default:
			return false
		}
	}
}

// handLaneBack ends a holder's read on a read lane (an IO's, a UDP's) in
// state: open again, or, when the loop marked it wanted, shut, and true:
// the loop must look again. A lane failed meanwhile (closed) stays so.
func handLaneBack(state *atomic.Int32) (relook bool) {
	return !state.CompareAndSwap(rlaneBusy, rlaneOpen) && state.CompareAndSwap(rlaneWanted, rlaneShut)
}

// readDirect reads into p on the caller's goroutine when the read lane is
// open, waiting in the netpoller for bytes when wait is set; ok is false
// when it is not open, or when, not waiting, there was nothing to read
// (the caller goes to the loop). The loop goroutine never waits: a Read
// there reads what the kernel holds, or fails (event.ErrOnLoop).
func (e *ioEvent) readDirect(p []byte, wait bool) (n int, ok bool, err error) {
	l := e.rlane.Load()
	if l == nil || !l.state.CompareAndSwap(rlaneOpen, rlaneBusy) {
		return 0, false, nil
	}
	l.p, l.wait = p, wait
	werr := l.rc.Read(l.readFn)
	n, rerr := int(l.n), l.err
	l.p, l.n, l.err = nil, 0, nil // the caller's buffer is not kept
	switch {
	case werr != nil: // the wait ended: the deadline passed, or the IO closed
		n, err = 0, laneWaitErr(werr)
	case rerr == unix.EAGAIN: // not waiting, and nothing yet
		e.giveLaneBack(l)
		return 0, false, nil
	case rerr != nil:
		return 0, true, e.laneReadFailed(l, rerr)
	case n == 0:
		err = io.EOF // read(2) says so again to every Read after it
		e.endReached()
	default:
		e.in.Add(uint64(n))
		e.reads.Add(1)
	}
	e.giveLaneBack(l)
	return n, true, err
}

// laneWaitErr is a read lane's error (an IO's, a UDP's) when its wait in
// the netpoller ended: the deadline passed (errTimeout), or the file
// closed with the event (ErrClosed).
func laneWaitErr(werr error) error {
	if errors.Is(werr, os.ErrDeadlineExceeded) {
		return errTimeout
	}
	return ErrClosed
}

// giveLaneBack ends the holder's read: the lane is open again, or, when
// the loop wants to read, shut and the loop asked to look again.
func (e *ioEvent) giveLaneBack(l *readLane) {
	if handLaneBack(&l.state) { // wanted: the loop waits to read
		if e.r.Owner().Owned() {
			e.updateReading()
		} else {
			e.post(e.updateReading)
		}
	}
}

// laneReadFailed shuts the lane for good on a failed read(2): the loop
// records the failure, so that every read after this one fails alike. (A
// function of its own: the error its posted function captures goes to the
// heap only when a read fails.)
func (e *ioEvent) laneReadFailed(l *readLane, rerr error) error {
	err := os.NewSyscallError("read", rerr)
	l.state.Store(rlaneFailed) // never opened again, even before the loop records the failure
	e.endReached()
	e.post(func() {
		if !e.closed && e.rerr == nil {
			e.readFailed(err)
		}
		e.updateReading()
	})
	return err
}

// setLaneReadDeadline bounds the read lane's waits in the netpoller by
// the read deadline, as the loop's timer bounds the Reads parked on it.
func (e *ioEvent) setLaneReadDeadline(t time.Time) {
	if l := e.rlane.Load(); l != nil {
		l.f.SetReadDeadline(t) // a closed file: nothing waits any more
	}
}
