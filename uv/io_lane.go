package uv

import (
	"runtime"
	"slices"
	"sync/atomic"
	"syscall"
)

// This file is an IO's write lane: a blocking Write made off the loop while
// the writing side is idle does its non-blocking write(2) on the caller's
// goroutine, as package net's does, and goes to the loop only for what the
// socket did not take. A write that goes out whole costs no hand-off to
// the loop and back.
//
// The lane is made for the first blocking Write from another goroutine
// (useLane, on the loop): an IO written only by its callbacks (Send on
// the loop) never has one, and its writes touch no atomic, take no
// compare-and-swap and defer nothing for it.
//
// The lane is open only while the loop holds nothing of the writing side:
// no write queued or in flight (on either driver's transport), no shutdown
// asked for, no write error, the write deadline not passed, the IO open.
// The loop shuts it before it writes, queues a write, shuts the writing
// side down, fails the writes or closes the descriptor, waiting for a
// caller's system call in flight to end (one non-blocking write: the loop
// never waits for more). A caller's Write the socket took in part holds the
// lane: the writes the loop is given meanwhile queue behind the rest of
// it, which the caller hands the loop next, so no byte of another write
// goes out inside it.

// The lane's states.
const (
	laneShut   int32 = iota // the loop owns the writing side
	laneOpen                // idle: a caller may take it
	laneBusy                // a caller's write(2) is in flight
	laneHeld                // a caller's write went out in part; its rest comes to the loop first
	laneWanted              // busy, and the loop waits to take the lane back: the caller's write ends it
)

// writeLane is an IO's write lane: its state, the descriptor it writes
// to, set once the connection is made, and whether it is in use.
type writeLane struct {
	state atomic.Int32
	fd1   int32 // the descriptor plus one; 0 until the connection is made
	on    bool  // a blocking Write came from another goroutine (useLane); loop-owned
}

// setLane gives the lane its descriptor, on the loop, once the connection
// is made. It opens at the first blocking Write (useLane).
func (e *ioEvent) setLane() {
	if fd := e.t.laneFD(); fd >= 0 {
		e.lane.fd1 = int32(fd) + 1
	}
}

// useLane puts the lane in use, for a blocking Write from another
// goroutine: it opens once the loop holds nothing of the writing side
// (the Write that asked for it goes through the loop). On the loop.
func (e *ioEvent) useLane() { e.lane.on = true }

// openLane opens the lane when it is in use and the loop holds nothing of
// the writing side. On the loop.
func (e *ioEvent) openLane() {
	if !e.lane.on || e.lane.fd1 == 0 || e.lane.state.Load() != laneShut || e.closed || !e.t.open() ||
		len(e.writes) > 0 || e.tries > 0 || e.shut != nil || e.wshut || e.werr != nil || e.dl.write.expired() {
		return
	}
	e.lane.state.Store(laneOpen)
}

// shutLane takes the writing side back for the loop, waiting for a
// caller's write in flight. A held lane stays held: its rest is due. On
// the loop; a lane not in use is shut already.
//
// A busy lane is marked wanted, and the caller's write, ending, gives it
// to the loop (writeEnded) instead of opening it again: the loop waits for
// that one write(2), never for a window between a caller's writes, which
// callers writing back to back may never leave it.
func (e *ioEvent) shutLane() {
	if !e.lane.on {
		return
	}
	for spins := 0; ; {
		switch e.lane.state.Load() {
		case laneShut, laneHeld:
			return
		case laneOpen:
			if e.lane.state.CompareAndSwap(laneOpen, laneShut) {
				return
			}
		case laneBusy:
			e.lane.state.CompareAndSwap(laneBusy, laneWanted)
		default: // laneWanted: one non-blocking write(2) in flight
			// It ends within microseconds: the loop spins that long
			// rather than queue behind every runnable goroutine, and
			// yields after it, when the caller lost its thread.
			if spins++; spins > laneSpins {
				runtime.Gosched()
			}
		}
	}
}

// laneSpins is how many times shutLane looks at a wanted lane before it
// yields between looks: some microseconds, one write(2)'s time.
const laneSpins = 1 << 14

// held reports a caller's write cut short whose rest the loop waits for.
// On the loop.
func (e *ioEvent) held() bool { return e.lane.on && e.lane.state.Load() == laneHeld }

// releaseHeld takes the lane back from a caller's write cut short, at the
// close: the rest of it is withdrawn (resume finds the IO closed and the
// Write reports the bytes that went out through the lane, with ErrClosed),
// so nothing is due ahead of the writes queued meanwhile, which the
// lingering close hands over. On the loop, with the IO closing.
func (e *ioEvent) releaseHeld() {
	if e.held() {
		e.lane.state.Store(laneShut)
	}
}

// writeDirect writes p from the caller's goroutine when the lane is open.
// It returns the bytes written and whether the lane is held (p went out
// in part: the caller must hand the rest to resume). Nothing written (the
// lane shut, the socket full, an error the loop's own try will meet
// again), it returns 0 and false: the caller goes to the loop with p.
func (e *ioEvent) writeDirect(p []byte) (n int, held bool) {
	if len(p) == 0 || !e.lane.state.CompareAndSwap(laneOpen, laneBusy) {
		return 0, false
	}
	n, err := ignoringEINTR(func() (int, error) { return syscall.Write(int(e.lane.fd1-1), p) })
	if err != nil || n <= 0 {
		e.lane.writeEnded(laneOpen)
		return 0, false
	}
	e.out.Add(uint64(n))
	if n == len(p) {
		e.lane.writeEnded(laneOpen)
		return n, false
	}
	e.lane.writeEnded(laneHeld)
	return n, true
}

// writeEnded ends a caller's write on the lane: the lane goes to next
// (open, or held when the write went out in part), or, the loop having
// asked for it meanwhile (laneWanted), to the loop: shut, or held, whose
// rest the loop takes first all the same.
func (l *writeLane) writeEnded(next int32) {
	if l.state.CompareAndSwap(laneBusy, next) {
		return
	}
	if next == laneOpen {
		next = laneShut
	}
	l.state.Store(next)
}

// resume takes the rest of a Write that went out in part through the lane
// (p[n:]), ahead of the writes queued meanwhile, and gives the lane back
// to the loop. As write, it returns the bytes written and whether op
// waits for the rest. On the loop.
func (e *ioEvent) resume(p []byte, n int, op *ioOp) (int, bool, error) {
	e.lane.state.Store(laneShut)
	defer e.openLane()
	switch {
	case e.closed:
		return n, false, ErrClosed
	case e.werr != nil:
		return n, false, e.werr
	case e.dl.write.expired():
		return n, false, errTimeout // p[:n] went out: exactly what it reports
	}
	// Nothing was handed to the transport while the lane was held: the
	// ops queued meanwhile wait, unfed, behind this one.
	op.n, op.handed, op.p = n, n, p[n:]
	e.writes = slices.Insert(e.writes, 0, op)
	e.fed = 0
	e.pending += len(op.p)
	e.feed()
	if e.werr != nil && op.left == 0 {
		// Refused at once: the caller hears it, no completion comes.
		e.writes = slices.Delete(e.writes, 0, 1)
		e.pending -= len(op.p)
		op.p = nil
		err := e.werr // settleWrites clears a write's openFailure
		e.settleWrites()
		return n, false, err
	}
	return n, true, nil
}
