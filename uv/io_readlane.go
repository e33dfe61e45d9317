package uv

import (
	"errors"
	"io"
	"os"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
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
// when one does (handBack), not by the loop: the close of a socket's last
// descriptor is where the kernel ends the connection (a FIN, a reset),
// work package net has each connection's goroutine do, and which the loop
// would otherwise do for every connection a server closes, in turn.

// The read lane's states.
const (
	rlaneShut   int32 = iota // the loop owns the reading side
	rlaneOpen                // idle: a caller may take it
	rlaneBusy                // a caller reads, or waits in the netpoller to
	rlaneWanted              // busy, and the loop waits to read
	rlaneFailed              // a read(2) of the lane failed: the loop owns the reading side for good
)

// readLane is an IO's read lane: its state and the descriptor's
// os.File, through which a caller waits in the netpoller. It is made (and
// published, never changed) at the connection's first blocking Read.
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
	// place in the budget (io_uv.go); nil for the descriptor itself.
	release func()
}

// What the loop does with the lane's file when the IO closes (closer).
const (
	closerNone   int32 = iota // the loop closes it: nobody's Close waits for the loop
	closerWaits               // a goroutine's Close waits for the loop: the file is for it to close
	closerHanded              // the loop left the file to that goroutine, which closes it
)

// handBack leaves the lane's file to the goroutine whose Close waits for
// the loop to close the IO; false when none waits, and the loop closes it.
// On the loop, at the IO's close.
func (l *readLane) handBack() bool {
	return l.closer.CompareAndSwap(closerWaits, closerHanded)
}

// closeFile closes the lane's file: the descriptor (pure-Go driver) or its
// duplicate (libuv's, with its bookkeeping: release).
func (l *readLane) closeFile() {
	if l.release != nil {
		l.release()
	} else {
		l.f.Close()
	}
}

// closeHandedBack is IO.Close with the lane's file handed back: close runs
// the IO's close on the loop and waits for it, and the file the loop left
// (handBack) is closed here, on the closing goroutine, before Close
// returns. One Close waits for the file at a time; another closes as if
// none did.
func (l *readLane) closeHandedBack(close func() error) error {
	if !l.closer.CompareAndSwap(closerNone, closerWaits) {
		return close()
	}
	err := close()
	if !l.closer.CompareAndSwap(closerWaits, closerNone) {
		l.closeFile() // handed: the loop closed the IO and left the file
	}
	return err
}

// read is the lane's read(2) into p, for the netpoller's wait: false when
// there is nothing to read yet and the read waits (without wait, one
// read(2), whatever it gives). (Package syscall's Read, as net's: x/sys's
// goes through one more call to reach it.)
func (l *readLane) read(fd uintptr) bool {
	for {
		var n int
		n, l.err = syscall.Read(int(fd), l.p)
		l.n = int32(n)
		if l.err != unix.EINTR {
			return l.err != unix.EAGAIN || !l.wait
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
	laneFile() (f *os.File, release func())
}

// setReadLane gives the read lane its file, on the loop, when the first
// blocking Read of a connection comes to it: an IO read only by its
// callbacks or requests never has one (nor its cost: the file, and the
// descriptor's place in the netpoller).
func (e *ioEvent) setReadLane() {
	if e.tried || e.closed || !e.t.open() || e.lane.fd1 == 0 {
		return
	}
	e.tried = true
	rl, ok := e.t.(readLaner)
	if !ok {
		return
	}
	f, release := rl.laneFile()
	if f == nil {
		return
	}
	rc, err := f.SyscallConn()
	if err != nil { // only for a nil or closed file: never this one
		panic("uv: the read lane's file: " + err.Error())
	}
	e.dl.lane.Lock() // a setter off the loop sees the lane, or the file gets its deadline here
	f.SetReadDeadline(e.dl.read.time())
	l := &readLane{f: f, rc: rc, release: release}
	l.readFn = l.read
	e.rlane.Store(l)
	e.dl.lane.Unlock()
	e.updateReading() // reading ahead ends: the lane reads from now on
	e.openReadLane()
}

// readyForBlocking makes a connection's read lane and puts its write lane
// in use before it is handed to AcceptIO: a connection taken by Accept
// (net.Listener's) is read and written by blocking calls, so its first
// Read and its first Write go to the socket from the caller's goroutine,
// with no round trip through the loop (which a connection that makes one
// request, as net/http's without keep-alive, would pay on each). Its
// addresses are read too (unless the listener read them as it accepted
// it), as net's Accept reads them: LocalAddr and RemoteAddr (net/http asks
// both of every connection) then make no round trip either. On the loop.
func (e *ioEvent) readyForBlocking() {
	e.addrs.read(e)
	e.setReadLane()
	e.useLane()
	e.openLane()
}

// openReadLane opens the read lane when the loop holds nothing of the
// reading side. On the loop.
func (e *ioEvent) openReadLane() {
	l := e.rlane.Load()
	if l == nil || l.state.Load() != rlaneShut || e.closed || !e.t.open() ||
		e.started || e.reading || len(e.readers) > 0 || len(e.chunks) > 0 || e.rerr != nil || e.dl.read.expired() ||
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
	if l == nil {
		return true
	}
	for {
		switch l.state.Load() {
		case rlaneShut, rlaneFailed:
			return true
		case rlaneOpen:
			if l.state.CompareAndSwap(rlaneOpen, rlaneShut) {
				return true
			}
		case rlaneBusy:
			if l.state.CompareAndSwap(rlaneBusy, rlaneWanted) {
				return false
			}
		default:
			return false
		}
	}
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
	return e.readOnLane(l, p, wait)
}

// readOnLane is readDirect's read, the lane held.
func (e *ioEvent) readOnLane(l *readLane, p []byte, wait bool) (n int, ok bool, err error) {
	l.p, l.wait = p, wait
	werr := l.rc.Read(l.readFn)
	n, rerr := int(l.n), l.err
	l.p, l.n, l.err = nil, 0, nil // the caller's buffer is not kept
	switch {
	case werr != nil: // the wait ended: the deadline passed, or the IO closed
		n, err = 0, ErrClosed
		if errors.Is(werr, os.ErrDeadlineExceeded) {
			err = errTimeout
		}
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

// giveLaneBack ends the holder's read: the lane is open again, or, when
// the loop wants to read, shut and the loop asked to look again.
func (e *ioEvent) giveLaneBack(l *readLane) {
	if !l.state.CompareAndSwap(rlaneBusy, rlaneOpen) {
		// Wanted: the loop waits to read.
		l.state.Store(rlaneShut)
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
