package uv

import (
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/eventkind"
	uvcgo "github.com/uvevent/uvevent/internal/cgo"
	"github.com/uvevent/uvevent/internal/kind"
)

// This file is an IO's close as a socket's: the bytes written before Close
// still go out (a lingering close the loop owns, as the kernel does for a
// net.Conn), bounded by the linger time, past which, or on Abort, the
// connection is reset and the bytes dropped are reported.

// DefaultLinger bounds a lingering close unless SetLinger says otherwise:
// past it the connection is reset and the bytes still queued are dropped.
const DefaultLinger = 10 * time.Second

// ErrDropped matches the error of a close that dropped bytes the IO had
// accepted (a *DropError): reported to the reactor's Options.OnReport (or
// its logger) with the IO's event.
var ErrDropped = errors.New("uv: IO closed with bytes not sent")

// ErrAborted is the cause of a drop that Abort asked for, Close with a
// linger time of 0 (SetLinger(0)), or the reactor's Shutdown whose context
// ended while the close lingered.
var ErrAborted = errors.New("uv: IO aborted")

// A DropError tells what a close dropped: Bytes, accepted by Send,
// WriteAsync or Write but not yet handed to the socket when the close gave
// up on them (bytes already in the socket's buffer are the kernel's, and a
// reset drops them too, uncounted). It matches ErrDropped, and through
// Unwrap its cause: os.ErrDeadlineExceeded when the linger time passed,
// ErrAborted for Abort (or SetLinger(0)), ErrClosed for a terminal's
// close (which does not linger: what it held is dropped, and reported),
// or the error that kept a lingering close from starting. A lingering
// close that a failed write ends (the peer closed or reset the
// connection: nothing more could reach it) reports nothing.
type DropError struct {
	// Bytes is the count of bytes dropped.
	Bytes int
	// Reset: the peer was sent a reset (TCP), so it reads ECONNRESET,
	// never a clean end. A Unix socket or a pipe has no reset: its peer
	// reads the end of the stream.
	Reset bool
	// Err is the cause of the drop.
	Err error
}

// Error says how the IO closed and what it dropped.
func (e *DropError) Error() string {
	if e == nil {
		return "<nil>"
	}
	how := "closed"
	if e.Reset {
		how = "reset"
	}
	return fmt.Sprintf("uv: IO %s with %d bytes not sent: %v", how, e.Bytes, e.Err)
}

// Is makes a DropError match ErrDropped.
func (e *DropError) Is(target error) bool { return e != nil && target == ErrDropped }

// Unwrap returns the cause of the drop.
func (e *DropError) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.Err
}

// lingerState is an IO's close as a socket's. Loop-owned.
type lingerState struct {
	linger time.Duration // SetLinger's: 0 means DefaultLinger, < 0 a reset at once
	abort  bool          // Abort: the close resets
	unsent int           // at the close: the bytes the transport still held (keepUnsent), or, at a reset, those never handed to it (dropUnsent)
	writes int           // at the close: the transport writes still in flight
	// stop cuts a lingering close short with a reset (Abort after Close).
	stop func()
	uv   uvcgo.Linger // the libuv driver's lingering close in progress
	// done is closed when the libuv driver's lingering close is over: the
	// reactor's Close waits for it (kind.Host.LingerReset).
	done chan struct{}
}

// How an IO's handle or descriptor closes.
const (
	closePlain  = iota // at once, as a file: what is queued goes (nothing is)
	closeReset         // at once, with a reset for TCP; what is queued is dropped
	closeLinger        // once what is queued is out, or reset past the linger time
)

// lingers reports an IO whose close lingers: a socket's (or a pipe's,
// OpenPipe's "unix" transport), not a terminal's.
func (e *ioEvent) lingers() bool { return e.transport == "tcp" || e.transport == "unix" }

// keepUnsent runs at the close, before the writes are failed: the bytes
// accepted for sending (Send, WriteAsync, and what blocking Writes handed
// over) are handed to the transport, which keeps them past the close; the
// rest of a blocking Write, which it will report not written, is
// withdrawn, that of a Write the write lane took in part too (releaseHeld:
// the writes queued behind it are handed over all the same). It records
// the bytes the transport holds then, and reports whether every byte
// handed to the transport goes out (or, lingering past its time, is
// reported dropped): those the transport holds linger, the others are in
// the kernel already, though their completions may not have come (libuv's
// uv_write writes at once and completes on the next turn).
func (e *ioEvent) keepUnsent() bool {
	e.releaseHeld()
	if !e.lingers() || !e.t.open() || e.werr != nil {
		return false
	}
	for _, op := range e.writes {
		if op.windowed() {
			e.pending -= len(op.p)
			op.p = nil
		}
	}
	e.fed = 0
	e.feed()
	if e.werr != nil {
		return false
	}
	unsent, writes := e.t.queueSize(), 0
	for _, op := range e.writes {
		writes += op.left
	}
	if x := e.rare.Load(); x != nil || unsent > 0 || writes > 0 {
		x = e.extra()
		x.lg.unsent = unsent
		x.lg.writes += writes
	}
	return true
}

// dropUnsent runs at a close that resets (resets), in place of
// keepUnsent: nothing more is handed to the transport, so no byte the IO
// held goes out, not even what the socket has room for (libuv's uv_write,
// handed a write with its queue empty, writes at once): the writes not
// handed yet are dropped with what the transport holds. The rest of a
// caller's write cut short is withdrawn (releaseHeld), as keepUnsent does.
// It records the bytes of the Sends and WriteAsyncs not handed, which the
// reset's report counts beside those its transport drops (none after a
// write error: nothing more could go out).
func (e *ioEvent) dropUnsent() {
	e.releaseHeld()
	if !e.t.open() || e.werr != nil {
		return
	}
	if n := e.unhanded(); n > 0 {
		e.extra().lg.unsent = n
	}
}

// resets reports a close that drops what the IO holds at once (Abort,
// SetLinger(0)): nothing it held goes out but what reached the kernel, so
// a Write it fails reports that (countWritten), not the bytes it handed
// over, and the writes not handed yet never are (dropUnsent).
func (e *ioEvent) resets() bool {
	x := e.rare.Load()
	return e.lingers() && x != nil && (x.lg.abort || x.lg.linger < 0)
}

// unsent is the bytes the transport held at the close (keepUnsent), or,
// at a reset, those never handed to it (dropUnsent); 0 before it.
func (e *ioEvent) unsent() int {
	if x := e.rare.Load(); x != nil {
		return x.lg.unsent
	}
	return 0
}

// closeMode says how the handle or descriptor closes, and for how long at
// most a lingering close lingers.
func (e *ioEvent) closeMode() (int, time.Duration) {
	x := e.rare.Load()
	switch {
	case !e.lingers() || x == nil: // nothing queued, no SetLinger, no Abort
		return closePlain, 0
	case e.resets():
		return closeReset, 0
	case x.lg.unsent > 0 && x.lg.writes > 0:
		if x.lg.linger == 0 {
			return closeLinger, DefaultLinger
		}
		return closeLinger, x.lg.linger
	}
	return closePlain, 0
}

// dropped reports a close that dropped n bytes (nothing when n is 0).
func (e *ioEvent) dropped(ev event.Event, n int, reset bool, cause error) {
	if n > 0 {
		eventkind.Report(e.r.Owner(), ev, "IO closed with bytes not sent", &DropError{Bytes: n, Reset: reset, Err: cause})
	}
}

// SetLinger sets how Close treats bytes still queued (sent, but not yet
// taken by the socket) on a TCP or Unix socket or a pipe, as
// net.TCPConn.SetLinger does but for the bytes the IO holds, in a
// time.Duration:
//
//   - d > 0: Close returns at once, and the loop goes on writing what is
//     queued, then closes (the peer reads every byte, then the end of the
//     stream); if d passes first, the connection is reset and the drop
//     reported (a *DropError matching ErrDropped and
//     os.ErrDeadlineExceeded);
//   - d < 0: the same with DefaultLinger (10 s), the IO's setting until
//     SetLinger;
//   - d == 0: Close is Abort: the connection is reset at once and what is
//     queued dropped, and reported.
//
// Unlike the kernel's SO_LINGER, a positive d never makes Close wait, and
// bytes the socket took already are the kernel's (they go out after the
// close, as a net.Conn's do). It fails on a terminal (EINVAL), and with
// ErrClosed once closed.
func (c *IO) SetLinger(d time.Duration) error {
	if c.zero() {
		return errZero("IO")
	}
	e := c.e
	return e.do(func() error {
		if !e.lingers() {
			return fmt.Errorf("uv: SetLinger on a %s IO: %w", e.transport, errInvalid)
		}
		lg := &e.extra().lg
		switch {
		case d < 0:
			lg.linger = 0
		case d == 0:
			lg.linger = -1
		default:
			lg.linger = d
		}
		return nil
	})
}

// Abort closes the IO at once, dropping what is still queued, none of it
// written first (not even what the socket has room for; a Send made in
// the loop's current turn is tried first, as it would have been at once,
// and only its rest is dropped): a TCP
// connection is reset (SO_LINGER 0, libuv's uv_tcp_close_reset), so that
// the peer reads ECONNRESET, never a clean end; a Unix socket or a pipe,
// which has no reset, is closed. Bytes dropped are reported (a *DropError
// matching ErrDropped and ErrAborted); a blocking Write it fails reports
// the bytes of it that reached the kernel, not those dropped (on TCP the
// reset drops what the kernel still holds too: the peer reads a prefix of
// them, as after net.TCPConn's SetLinger(0) and Close). After Close, Abort cuts a lingering
// close short the same way; on a closed IO with nothing lingering it does
// nothing.
func (c *IO) Abort() error {
	if c.zero() {
		return errZero("IO")
	}
	e := c.e
	if x := e.exec(func() {
		lg := &e.extra().lg
		lg.abort = true
		if stop := lg.stop; stop != nil {
			lg.stop = nil
			stop()
		}
	}); x != nil {
		return x
	}
	return c.Close()
}

// lingerWhat names a lingering close for a reactor's Close that waits for
// it, as the IO is when it closes (on the loop: the name is asked for from
// another goroutine). The reactor's Shutdown knows the prefix: a handle it
// names as still closing is this close, once reset, when the rest is the
// event's Info.
func lingerWhat(e *ioEvent) func() string {
	what := "the lingering close of " + e.describe()
	return func() string { return what }
}

// The libuv driver's lingering close: the handle stays open, out of the
// kit's hands, until the last write in flight completes (closeHandle,
// lingered).

// closeHandle closes the stream's handle, as its close asks (the kit's
// hook, in place of CloseHandle).
func (s *uvStream) closeHandle(h uvcgo.Handle) {
	if l := s.rlane.Load(); l != nil && !l.handBack() {
		// The read lane's duplicate first, unless the Close closing the IO
		// leaves it to its caller, which closes it once libuv has closed
		// its own (then the last: the connection ends there). A Read in
		// the netpoller wakes.
		l.release.Close()
	}
	mode, d := s.closeMode()
	switch mode {
	case closePlain:
		s.loop.CloseHandle(h)
	case closeReset:
		s.dropped(s, s.loop.ResetStream(h)+s.unsent(), s.transport == "tcp", ErrAborted)
	case closeLinger:
		lg := &s.extra().lg
		g, err := s.loop.LingerStart(h, d.Milliseconds())
		if err != nil {
			s.dropped(s, lg.unsent, false, err) // closed at once
			return
		}
		lg.uv = g
		lg.stop = func() { s.endLinger(true, ErrAborted) }
		lg.done = make(chan struct{})
		eventkind.ActiveDelta(s.r.Owner(), 1) // Run goes on until it is over
		// A Shutdown whose context ends resets it, on the loop.
		kind.HostOf(s.r.Owner()).LingerReset(lingerWhat(&s.ioEvent), lg.done, func() { s.endLinger(true, ErrAborted) })
	}
}

// lingered handles a record of a closed stream: the writes of a lingering
// close, or its timer's reset.
func (s *uvStream) lingered(rec *uvcgo.Completion) {
	x := s.rare.Load()
	if x == nil || x.lg.uv == 0 {
		return
	}
	switch {
	case rec.Kind == uvcgo.CompletionShutdown && rec.Aux == uvcgo.LingerReset:
		s.endLinger(false, nil) // reports the timer's drop
	case rec.Kind != uvcgo.CompletionWrite:
	case rec.Status < 0:
		s.out.Add(uint64(rec.Aux)) // what of it the kernel took before the failure
		s.endLinger(false, nil)    // the peer is gone: nothing more could reach it
	default:
		s.out.Add(uint64(rec.N))
		if x.lg.writes--; x.lg.writes <= 0 {
			s.endLinger(false, nil)
		}
	}
}

// endLinger ends the lingering close: the stream closes (reset when asked),
// and what it dropped is reported with cause. Once. When the linger's
// timer reset the stream already, its drop is reported (with
// os.ErrDeadlineExceeded) whoever ends the linger: its record, or an
// Abort or a Shutdown's reset that came in the same turn, before the
// record was seen (the record then finds the linger over).
func (s *uvStream) endLinger(reset bool, cause error) {
	x := s.rare.Load()
	if x == nil || x.lg.uv == 0 {
		return
	}
	g := x.lg.uv
	x.lg.uv, x.lg.stop = 0, nil
	n, timedOut := s.loop.LingerEnd(g, reset)
	if timedOut {
		reset, cause = true, os.ErrDeadlineExceeded
	}
	eventkind.ActiveDelta(s.r.Owner(), -1)
	if cause != nil {
		s.dropped(s, n, reset && s.transport == "tcp", cause)
	}
	close(x.lg.done)
}

// The pure-Go driver's lingering close: the descriptor leaves the loop (a
// duplicate of it, the loop's own closing as any other's), and a goroutine
// of its own writes what was queued, waiting in Go's netpoller, bounded by
// the linger time; the reactor's Close waits for it (kind.Host.Linger).

// closeFD closes the descriptor as the IO's close asks, with the queue left
// in wq: fd is the loop's to close after this, as before.
func (g *goStream) closeFD(wq []goWrite) {
	mode, d := g.closeMode()
	switch mode {
	case closeReset:
		n := g.unsent() // never handed to the queue (dropUnsent)
		for _, w := range wq {
			n += len(w.p) - w.off
		}
		reset := g.transport == "tcp" && setNoLinger(g.fd) == nil
		g.dropped(g, n, reset, ErrAborted)
	case closeLinger:
		fd, err := unix.FcntlInt(uintptr(g.fd), unix.F_DUPFD_CLOEXEC, 0)
		if err != nil {
			g.dropped(g, g.unsent(), false, os.NewSyscallError("fcntl", err))
			return
		}
		g.lingerOn(os.NewFile(uintptr(fd), g.transport), wq, d)
	}
}

// setNoLinger sets SO_LINGER to 0: the close resets the connection.
func setNoLinger(fd int) error {
	return unix.SetsockoptLinger(fd, unix.SOL_SOCKET, unix.SO_LINGER, &unix.Linger{Onoff: 1, Linger: 0})
}

// lingerOn writes wq to f, bounded by d, then closes f: at once and
// cleanly once all is out, with a reset (TCP) when d passes first or Abort
// cuts it short. What the peer sends meanwhile is read and dropped.
func (g *goStream) lingerOn(f *os.File, wq []goWrite, d time.Duration) {
	r, ev := g.r, event.Event(g)
	tcp := g.transport == "tcp"
	f.SetWriteDeadline(time.Now().Add(d))
	var aborted atomic.Bool
	stop := func() {
		aborted.Store(true)
		f.SetWriteDeadline(time.Unix(1, 0)) // wakes the write
	}
	lg := &g.extra().lg
	lg.stop = stop
	done := make(chan struct{})
	eventkind.ActiveDelta(r.Owner(), 1) // Run goes on until it is over
	// A Shutdown whose context ends resets it as Abort does.
	kind.HostOf(r.Owner()).LingerReset(lingerWhat(&g.ioEvent), done, stop)
	go func() {
		buf := make([]byte, 16<<10)
		for {
			if _, err := f.Read(buf); err != nil {
				return // the end, an error, or f closed
			}
		}
	}()
	go func() {
		defer close(done)
		var err error
		left := 0
		for _, w := range wq {
			left += len(w.p) - w.off
		}
		for _, w := range wq {
			if err != nil {
				break
			}
			var n int
			n, err = f.Write(w.p[w.off:])
			left -= n
			g.out.Add(uint64(n))
		}
		reset := false
		switch {
		case err == nil:
		case aborted.Load():
			err = ErrAborted
		case errors.Is(err, os.ErrDeadlineExceeded):
			err = os.ErrDeadlineExceeded
		default:
			err = nil // the peer is gone: nothing more could reach it
		}
		if err != nil {
			if tcp {
				if rc, rerr := f.SyscallConn(); rerr == nil {
					rc.Control(func(fd uintptr) { reset = setNoLinger(int(fd)) == nil })
				}
			}
		}
		f.Close()
		// The report is made on the loop, as every other: OnReport may ask
		// the event for its Info, which the loop answers.
		if r.Post(func() {
			lg.stop = nil
			if err != nil {
				g.dropped(ev, left, reset, err)
			}
			eventkind.ActiveDelta(r.Owner(), -1)
		}) != nil && err != nil {
			g.dropped(ev, left, reset, err) // the reactor is closed: nothing asks the loop any more
		}
	}()
}
