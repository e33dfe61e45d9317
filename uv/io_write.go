package uv

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/uvevent/uvevent/eventkind"
)

// This file is an IO's write side, shared by both drivers: the write ops
// in order, what each has handed to the transport, the shutdown behind
// them, and the drain waits.
//
// Every write op sits in e.writes until it completes. Its bytes go to the
// transport in chunks of at most writeChunk, in order: an op is handed
// over only once every op before it has been. A blocking Write (the one
// kind of write a deadline bounds) keeps at most writeWindow bytes in the
// transport at a time and the rest, not yet handed, in the caller's
// memory: when its deadline passes, the bytes handed over are what it
// reports written (they go out, as the net.Conn contract wants p[:n] to)
// and the rest is withdrawn, so a caller retrying p[n:] sends no byte
// twice. A Send or a WriteAsync is handed over whole as soon as it is
// first in line (copied first when it must wait behind a Write).

// writeChunk is the largest single transport write: each completes on its
// own, so the queue shrinks (and drain waits hear of it) in steps of at
// most this many bytes.
const writeChunk = 256 << 10

// writeWindow bounds the bytes of blocking Writes in the transport at a
// time, per IO (ioEvent.winFlying): what a passing deadline cannot
// withdraw any more. The bound holds across Writes: one that timed out
// leaves its bytes in flight, and a retry waits for room behind them
// rather than queue a window of its own.
const writeWindow = 4 * writeChunk

// windowed reports a write op that a deadline bounds: a blocking Write's.
func (op *ioOp) windowed() bool { return op.ch != nil }

// write writes p: what the socket takes at once (when nothing waits
// before it), the rest queued behind op (a new op without waiter when op
// is nil). It returns the bytes written now and whether op waits for
// the rest. On the loop. An IO without a write lane in use (written by
// its callbacks only) goes straight to writeOwned: no atomic, no defer.
func (e *ioEvent) write(p []byte, op *ioOp) (int, bool, error) {
	if !e.lane.on {
		return e.writeOwned(p, op)
	}
	e.shutLane()
	n, wait, err := e.writeOwned(p, op)
	e.openLane()
	return n, wait, err
}

// writeOwned is write with the writing side the loop's (the lane shut).
func (e *ioEvent) writeOwned(p []byte, op *ioOp) (int, bool, error) {
	switch {
	case e.closed:
		return 0, false, ErrClosed
	case e.werr != nil:
		return 0, false, e.werr
	case e.shut != nil:
		return 0, false, e.t.refusal(false)
	case op != nil && op.windowed() && e.dl.write.expired():
		return 0, false, errTimeout
	}
	n := 0
	if len(e.writes) == 0 && !e.held() { // with writes queued, a try would pass them
		if op == nil && e.t.deferTry(p) {
			e.tries++ // a Send: tried with the turn's others (sendTried hears how)
			return 0, false, nil
		}
		if e.tries > 0 {
			e.t.flushTries() // the Sends deferred go first
			return e.writeOwned(p, op)
		}
		var err error
		if n, err = e.t.tryWrite(p); err != nil {
			e.werr = err
			return 0, false, err
		}
		e.out.Add(uint64(n))
		if n == len(p) {
			return n, false, nil
		}
	} else if e.tries > 0 {
		e.t.flushTries() // cannot be: nothing is queued while tries wait; keep the order all the same
		return e.writeOwned(p, op)
	}
	return e.enqueue(p, n, op)
}

// enqueue queues p[n:] (the rest of a write whose first n bytes went out)
// behind op, or a new op without waiter when op is nil. On the loop.
func (e *ioEvent) enqueue(p []byte, n int, op *ioOp) (int, bool, error) {
	if op == nil {
		op = &ioOp{}
	}
	op.n, op.handed, op.p = n, n, p[n:]
	if !op.windowed() && e.pending > 0 {
		// It waits behind bytes not handed over yet, and its caller
		// does not wait for it: it needs its own copy.
		op.p = bytes.Clone(op.p)
	}
	e.writes = append(e.writes, op)
	e.pending += len(op.p)
	e.feed()
	if e.werr != nil && op.left == 0 {
		// Refused at once: the caller hears it, no completion comes.
		e.writes = e.writes[:len(e.writes)-1]
		e.pending -= len(op.p)
		op.p = nil
		err := e.werr // settleWrites clears a write's openFailure
		e.settleWrites()
		return n, false, err
	}
	return n, true, nil
}

// sendTried is the outcome of a Send whose try was deferred to the loop's
// batch (writeOwned): n of p's bytes went out, the rest is queued as it
// would have been at once; a failure fails the stream, and the callbacks
// of a started IO hear of it as of a queued Send's. p is the batch's
// copy, valid during the call only. On the loop, at the end of the
// turn's dispatch or when a write, a shutdown, Queued or the close needs
// the IO's tries made first.
func (e *ioEvent) sendTried(p []byte, n int, err error) {
	e.tries--
	switch {
	case e.closed:
		return
	case e.werr != nil:
		return // an earlier write failed: these bytes never go out (it was told)
	case err != nil:
		e.werr = err
		if e.started {
			eventkind.Notify(e.base, nil, err)
		}
		e.settleWrites()
		return
	}
	e.out.Add(uint64(n))
	if n < len(p) {
		if _, wait, err := e.enqueue(p, n, nil); wait {
			e.writes[len(e.writes)-1].ref = e.ref.Value() // the write in flight holds its IO
		} else if err != nil && e.started {
			eventkind.Notify(e.base, nil, err)
		}
	}
	e.openLane()
}

// feed hands the transport what may be handed now: each op in order, a
// windowed one up to its window; then the shutdown asked for once every
// byte is handed. A refusal fails the stream (werr).
func (e *ioEvent) feed() {
	if e.held() {
		return // the rest of a caller's write goes first (io_lane.go)
	}
	// The ops before e.fed are handed whole: a queue of a hundred thousand
	// small Sends must not cost a pass over it per Send.
	e.fed = min(e.fed, len(e.writes))
	for ; e.fed < len(e.writes); e.fed++ {
		op := e.writes[e.fed]
		for len(op.p) > 0 {
			k := min(len(op.p), writeChunk)
			if op.windowed() {
				if e.winFlying >= writeWindow {
					return
				}
				k = min(k, writeWindow-e.winFlying)
				op.win = true
				e.winFlying += k
			}
			if err := e.t.write(op.p[:k]); err != nil {
				e.werr = err
				if of := (*openFailure)(nil); errors.As(err, &of) {
					if op.win {
						e.winFlying -= k
					}
					// Not the stream's (nothing of it is in flight: the
					// connection is not open in libuv): the writes waiting
					// fail, and settleWrites lets the next ones go.
					e.werr = of.err
					e.extra().werrOpen = true
				}
				return
			}
			op.left++
			op.flying += k
			op.handed += k
			op.p = op.p[k:]
			e.pending -= k
		}
	}
	if e.shut != nil && !e.shutOut && e.pending == 0 {
		e.shutOut = true
		if err := e.t.shutdown(); err != nil {
			e.shutDone(err)
		}
	}
}

// wrote completes the oldest transport write in flight, of size bytes:
// it went out, n == size, or it failed with err, and n is the bytes of it
// the kernel took before the failure (the transport writes a request in
// part as the socket drains), which count written, as net.TCPConn's Write
// counts them.
func (e *ioEvent) wrote(size, n int, err error) {
	if len(e.writes) == 0 || e.writes[0].left == 0 {
		return
	}
	op := e.writes[0]
	op.left--
	flew := min(size, op.flying)
	op.flying -= flew
	if op.win {
		e.winFlying -= flew
	}
	op.n += n
	e.out.Add(uint64(n))
	if err != nil {
		if op.err == nil {
			op.err = err
		}
		e.werr = op.err
	}
	if e.werr == nil {
		e.feed()
	}
	e.settleWrites()
}

// settleWrites completes the ops at the head that are done: all written,
// or, once the stream failed, with nothing left in flight. Then the drain
// waits that the queue now satisfies.
func (e *ioEvent) settleWrites() {
	for len(e.writes) > 0 && !e.closed {
		op := e.writes[0]
		if e.werr != nil && op.left == 0 && len(op.p) > 0 {
			e.pending -= len(op.p)
			op.p = nil
			if op.err == nil {
				op.err = e.werr
			}
		}
		if op.left > 0 || len(op.p) > 0 {
			break
		}
		e.writes[0] = nil
		e.writes = e.writes[1:]
		e.fed = max(e.fed-1, 0)
		switch {
		case op.ch != nil || op.fut != nil:
			op.finish(op.n, op.err)
		case op.err != nil && e.started:
			eventkind.Notify(e.base, nil, op.err) // a Send failed: the callbacks hear of it
		}
	}
	if e.closed {
		return
	}
	if e.werr != nil && e.shut != nil && !e.shutOut {
		e.shutDone(e.werr) // the bytes it waited for will never go out
	}
	if x := e.rare.Load(); x != nil && x.werrOpen && len(e.writes) == 0 {
		x.werrOpen = false // the writes it failed are told: the next ones try again
		e.werr = nil
	}
	e.checkDrains()
	e.checkMark()
	e.openLane()
}

// writeTimedOut fails the parked blocking Writes: each reports the bytes
// it handed to the transport, which still go out, and withdraws the rest.
func (e *ioEvent) writeTimedOut() {
	e.shutLane()
	kept := e.writes[:0]
	for _, op := range e.writes {
		if !op.windowed() {
			kept = append(kept, op)
			continue
		}
		e.pending -= len(op.p)
		if op.left > 0 { // its chunks in flight complete behind a stand-in
			kept = append(kept, &ioOp{n: op.n, left: op.left, handed: op.handed, flying: op.flying, win: op.win, err: op.err, ref: op.ref})
		}
		op.p = nil
		op.finish(op.handed, errTimeout)
	}
	clear(e.writes[len(kept):])
	e.writes, e.fed = kept, 0
	if e.werr == nil {
		e.feed()
	}
	e.settleWrites()
}

// countWritten sets each write op's n to the bytes of it that reached the
// kernel, at a close that keeps nothing the transport holds (a reset, or
// keepUnsent found no lingering close: a terminal, or a stream whose
// write failed).
// Its completed bytes are not all: the transport writes a request in
// part, and writes a whole one before its completion comes (libuv's
// uv_write at once, its callback on a later turn), so a caller told only
// the completed bytes would retry some that went out. The transport's
// queue size is the bytes handed to it and not written yet (libuv's
// write_queue_size, which uv_write adds a request's bytes to and each
// write(2) takes its bytes from; the pure-Go driver's queue likewise): the
// last ones handed, since it writes them in order, and the ops handed
// them in order too. So, from the newest op back, each op's bytes in
// flight are unwritten up to what the queue holds, and the rest of them
// were written. On the loop, before the handle closes (which drops the
// queue: libuv cancels its requests).
//
// After a write error (werr) the queue size says nothing: the requests
// behind the failed one may have failed too before their records are
// dispatched (libuv tries them again as the descriptor reports its
// hang-up, and each failure takes its bytes off the queue size at once,
// its record coming later; the pure-Go driver empties its queue and fails
// its writes in one go), so their bytes would be counted written though
// none was (TestWriteClosedOnSendFailureReportsWritten: a close made by
// the callback that hears the failure). No byte handed after the failed
// request reaches the kernel, and the completions of those before it have
// all come (the records come in order): n is then the bytes completed, and
// those the kernel took of the failed request (wrote), as it is.
//
// One case it cannot see: a libuv request that failed (EIO, EPIPE) in the
// turn of the close, whose record is still to be dispatched (werr not set
// yet), has left the queue size with its unwritten bytes, which are
// counted written then; the stream has failed, so nothing retried on it
// goes out twice.
func (e *ioEvent) countWritten() {
	if !e.t.open() || e.werr != nil {
		return
	}
	unwritten := e.t.queueSize()
	for i := len(e.writes) - 1; i >= 0; i-- {
		op := e.writes[i]
		k := min(unwritten, op.flying)
		unwritten -= k
		op.n += op.flying - k
		op.flying = k
	}
}

// unwritten is what a close that keeps nothing drops, once countWritten
// has counted what reached the kernel: the bytes handed to the transport
// and not written, and those of the writes without a caller waiting
// (Send, WriteAsync) not yet handed (unhanded), as a reset counts them
// (dropUnsent); a blocking Write's rest is withdrawn, its caller told.
// None after a write error: nothing more could go out.
func (e *ioEvent) unwritten() int {
	if e.werr != nil || !e.t.open() {
		return 0
	}
	n := e.unhanded()
	for _, op := range e.writes {
		n += op.handed - op.n
	}
	return n
}

// unhanded is the bytes of the writes without a caller waiting (Send,
// WriteAsync) not yet handed to the transport.
func (e *ioEvent) unhanded() int {
	n := 0
	for _, op := range e.writes {
		if !op.windowed() {
			n += len(op.p)
		}
	}
	return n
}

// queued is Queued on the loop: the bytes in the transport's queue and
// those not yet handed to it.
func (e *ioEvent) queued() int {
	if e.closed || !e.t.open() {
		return 0
	}
	if e.tries > 0 {
		e.t.flushTries() // what the socket did not take of them is queued
	}
	return e.t.queueSize() + e.pending
}

// closeWrite asks for the shutdown of the writing side, behind every
// write asked for before it; op completes when it is done. On the loop.
func (e *ioEvent) closeWrite(op *ioOp) error {
	if e.tries > 0 {
		e.t.flushTries() // the Sends deferred go out before the shutdown
	}
	e.shutLane()
	switch {
	case e.closed:
		return ErrClosed
	case e.shut != nil:
		return e.t.refusal(true)
	case e.werr != nil && e.pending > 0:
		return e.werr
	}
	e.wshut = true
	if e.pending == 0 && !e.held() {
		// Handed at once: the transport refuses what it refuses
		// (a second shutdown, a descriptor open for reading only).
		if err := e.t.shutdown(); err != nil {
			return err
		}
		e.shut, e.shutOut = op, true
		return nil
	}
	e.shut, e.shutOut = op, false // handed by feed once the bytes before it are
	return nil
}

// shutDone completes the shutdown asked for. One nobody waits for (asked
// on the loop) tells the callbacks of a started IO when it fails.
func (e *ioEvent) shutDone(err error) {
	op := e.shut
	if op == nil {
		return
	}
	e.shut = nil // a second one is the transport's to refuse
	if op.ch == nil && op.fut == nil {
		if err != nil && e.started && !e.closed {
			eventkind.Notify(e.base, nil, err)
		}
		return
	}
	op.finish(0, err)
}

// drainWait is a DrainAsync request: it completes once the queue is at or
// below mark.
type drainWait struct {
	mark int
	fut  settler
	ref  *IO // held while it waits, as every request in flight holds its IO
}

// drain registers a drain wait, completing it now when the queue is low
// enough already. On the loop.
func (e *ioEvent) drain(mark int, fut settler, ref *IO) {
	switch q := e.queued(); {
	case e.closed:
		fut.settle(nil, ErrClosed)
	case q <= mark:
		fut.settle(q, nil)
	case e.werr != nil:
		fut.settle(nil, e.werr)
	default:
		x := e.extra()
		x.drains = append(x.drains, drainWait{mark: mark, fut: fut, ref: ref})
		eventkind.ActiveDelta(e.r.Owner(), 1)
	}
}

// checkDrains completes the drain waits the queue now satisfies, and all
// of them with the stream's error once it failed.
func (e *ioEvent) checkDrains() {
	x := e.rare.Load()
	if x == nil || len(x.drains) == 0 {
		return
	}
	if e.werr != nil {
		e.failDrains(e.werr)
		return
	}
	q := e.queued()
	kept := x.drains[:0]
	var done []drainWait
	for _, d := range x.drains {
		if d.fut.closed() {
			eventkind.ActiveDelta(e.r.Owner(), -1)
			continue
		}
		if q <= d.mark {
			done = append(done, d)
			continue
		}
		kept = append(kept, d)
	}
	clear(x.drains[len(kept):])
	x.drains = kept
	for _, d := range done {
		eventkind.ActiveDelta(e.r.Owner(), -1)
		d.fut.settle(q, nil)
	}
}

// failDrains fails every drain wait with err.
func (e *ioEvent) failDrains(err error) {
	x := e.rare.Load()
	if x == nil {
		return
	}
	ds := x.drains
	x.drains = nil
	for _, d := range ds {
		eventkind.ActiveDelta(e.r.Owner(), -1)
		if !d.fut.closed() {
			d.fut.settle(nil, err)
		}
	}
}

// errMark refuses a negative drain mark.
func errMark(mark int) error {
	return fmt.Errorf("uv: DrainAsync(%d): %w", mark, errInvalid)
}
