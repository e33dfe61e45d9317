package uv

import (
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"weak"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/eventkind"
	"github.com/uvevent/uvevent/internal/kind"
	"github.com/uvevent/uvevent/reactor"
)

// An IO is a byte stream over a libuv stream handle (on the pure-Go
// driver, a non-blocking descriptor in the reactor's epoll set), the
// transport chosen at creation: a TCP connection or a Unix domain one (Dial, or accepted by
// a Listener), one end of a socket pair (Pipe), a descriptor opened as a
// stream (OpenPipe). It can be used three ways, which may be mixed:
//
//   - as an event: Start it and its callbacks get every read (OnRead: as
//     a []byte; Subscribe: as a *[]byte result, which IO.Result reads),
//     or io.EOF, or the error, when the stream ends. The bytes are a view
//     of the buffer the read went into (C memory on the libuv driver, a
//     pooled Go buffer on the pure-Go one), and the *[]byte is the IO's
//     own, rewritten for every read so that delivering one allocates
//     nothing: both are valid only during the callback, copy the bytes to
//     keep them. A callback answers with Send, which never blocks;
//   - through one-shot requests: ReadAsync and WriteAsync return futures,
//     which event.Await (or callbacks) can wait for;
//   - through goroutine-blocking Read, Write and Close (io.Reader, io.Writer,
//     io.Closer); it is a net.Conn, with deadlines.
//
// A started IO with no callback (nor wait) to receive its reads reads as a
// stopped one does: a blocking Read takes the bytes, or they wait for the
// first callback that subscribes, which gets them in order; nothing is
// notified to nobody.
//
// Bytes read while the IO is not started and no Read waits are kept in the
// C buffers they were read into (up to readAhead), then reading pauses until
// they are consumed: a slow reader holds the peer back through TCP's flow
// control. (A TCP or Unix connection reads nothing ahead once a blocking
// Read has come, and on the pure-Go driver never: a blocking Read reads
// from its own goroutine, io_readlane.go.) Writes go to
// the socket at once where it takes them (uv_try_write, or a blocking
// Write's own write(2), io_lane.go); the rest is copied into C memory owned
// by a libuv write request, queued behind earlier writes (Queued tells how
// much waits).
//
// Closing fails every parked Read, Write and request with ErrClosed (which
// matches net.ErrClosed and event.ErrClosed) before the handle is closed;
// the bytes already accepted still go out, in a lingering close bounded by
// SetLinger's time (see Close), or are dropped at once by Abort.
//
// An IO is an event reference (see Lifetime in the package doc): started, or with a request in
// flight (ReadAsync, WriteAsync, a queued Send), it is held by its reactor
// whoever points at it; dropping a stopped one without Close is safe. A
// callback that captures its IO keeps it reachable: close it when
// the stream ends (IOOf gives the IO of the event a callback receives).
type IO struct {
	handle
	e *ioEvent
}

// readAhead bounds what an IO keeps read but not consumed before it pauses
// reading: bytes, and C buffers of ReadBufferSize each.
const (
	readAhead       = 256 << 10
	readAheadChunks = 16
)

// maxReadAsync bounds the bytes one ReadAsync takes (and the buffer it
// makes up front).
const maxReadAsync = readAhead

// ioEvent is what an IO's event holds on either driver, and the stream
// logic both share: buffering, parked operations, deadlines. The event is a
// uvStream (io_uv.go: a libuv stream handle) or, on the pure-Go driver, a
// goStream (io_go.go: a non-blocking descriptor in the reactor's epoll
// set); t is that transport. Every field is loop-owned except the counters
// and the cached addresses.
type ioEvent struct {
	r         *reactor.Reactor
	base      *event.Base // the event's
	t         streamTransport
	transport string
	ref       weak.Pointer[IO]

	started bool  // callbacks get the reads
	reading bool  // uv_read_start is in effect
	closed  bool  // closing ran: no record is looked at any more
	told    bool  // the callbacks were told of rerr
	shutOut bool  // the shutdown was handed to the transport
	wshut   bool  // a shutdown was asked for: the write lane never opens again
	viewing bool  // a notification holds view
	ipv     uint8 // 4 or 6 when dialled or listened on as tcp4 or tcp6 (netName)
	// tries: Sends deferred to the loop's batch of tries, outcome not yet
	// told (io_write.go).
	tries int32
	// parked is len(readers), for a read deadline made to pass off the
	// loop (conn.go's passReadDeadline): with none parked it need not wake
	// the loop. Raised before a reader parks checks the deadline again.
	parked atomic.Int32
	// laneMaking: whether the read lane was made or tried, and by whom
	// (io_readlane.go: laneMakingNone and after).
	laneMaking atomic.Int32
	lane       writeLane // a blocking Write's way around the loop (io_lane.go)
	// view is the *[]byte result a read reaches the callbacks in
	// (notifyRead).
	view   []byte
	chunks []chunk
	kept   int32 // bytes in chunks (at most readAhead and a buffer)
	// lastTry is the batch index of the libuv driver's last deferred try
	// of the stream, while tries > 0 (io_uv.go's deferTry): here, where it
	// packs with kept, rather than in uvStream.
	lastTry int32
	rerr    error // how reading ended (io.EOF, a reset, ...)
	readers []*ioOp
	writes  []*ioOp // write ops not yet complete, oldest first (io_write.go)
	pending int     // their bytes not yet handed to the transport
	fed     int     // writes[:fed] are handed to the transport whole (io_write.go)
	// winFlying: blocking Writes' bytes in flight, timed out ones' too;
	// at most writeWindow (io_write.go).
	winFlying int
	werr      error // a failed write: the stream cannot be written any more
	shut      *ioOp // a shutdown asked for (handed to the transport once pending is 0)
	conn      *ioOp // a connect in flight
	dl        deadlines
	rlane     atomic.Pointer[readLane] // a blocking Read's (io_readlane.go)
	// rare holds what few IOs use, made the first time one does (extra):
	// written on the loop only, read off it by endReached.
	rare atomic.Pointer[ioRare]

	in, out, reads atomic.Uint64
	addrs          addrCache
}

// ioRare is the part of an IO's state that most IOs never use, out of
// ioEvent so that those do not carry it (an idle connection served by
// Read and Write is ioEvent's size class): how the close goes, the
// high-water mark once set, the drain waits and event, the deadlines'
// timers, a child's output end. Loop-owned but for outEnd.
type ioRare struct {
	lg      lingerState       // how the close goes (io_linger.go)
	drains  []drainWait       // DrainAsync's requests (io_write.go)
	drainEv *drainEvent       // made by the first OnDrain (io_highwater.go)
	hwm     int               // Send refuses at this many bytes queued (mark, io_highwater.go)
	refused bool              // a Send was refused: the drain event fires once the queue is below hwm
	timers  [2]*reactor.Timer // the read and write deadlines' (conn.go)

	// outEnd, for a child's output read through StdioLoop, is told when
	// the reader was given the stream's end or the IO closed: the child's
	// completion comes after it (process_output.go). Set before the IO
	// is handed out; read from any goroutine.
	outEnd *childOutput

	// openErr: the last readStart failed to make what reading needs
	// (openFailure), which arm returns; on the loop.
	openErr error
	// werrOpen: werr is an openFailure of a write (feed), the writes'
	// failure only: settleWrites clears it once they are failed.
	werrOpen bool
}

// openFailure is a transport's failure to make what reading or writing needs (the
// libuv driver's accepted connection opened in libuv when it first must
// read there: a duplicate of its socket, a uv_tcp_t), not the stream's: a
// descriptor limit reached for a moment fails the Start or the Read that
// asked (with err), or the writes waiting, and the next one tries again,
// where a failed uv_read_start or uv_write ends its side for good.
type openFailure struct{ err error }

func (f *openFailure) Error() string { return f.err.Error() }
func (f *openFailure) Unwrap() error { return f.err }

// extra returns the IO's rare state, made at the first call. On the loop,
// or before the IO is handed out.
func (e *ioEvent) extra() *ioRare {
	x := e.rare.Load()
	if x == nil {
		x = &ioRare{hwm: DefaultHighWaterMark}
		e.rare.Store(x)
	}
	return x
}

// streamTransport is the stream under an IO, as the shared logic drives
// it; on the loop. Writes queued by write complete in order through
// ioEvent.wrote, a shutdown through shutDone, a connect through connected.
type streamTransport interface {
	// open reports whether the handle or descriptor is still there.
	open() bool
	readStart() error
	readStop()
	// tryWrite writes what the socket takes now, without queueing.
	tryWrite(p []byte) (int, error)
	// deferTry defers tryWrite(p) to the loop's batch of tries, made in
	// one crossing when the turn's records are dispatched (or at
	// flushTries), the outcome going to ioEvent.sendTried; it reports false
	// when it deferred nothing (the pure-Go driver, whose tries cross
	// nothing, never does).
	deferTry(p []byte) bool
	// flushTries makes the loop's deferred tries now.
	flushTries()
	// write queues a copy of p behind the earlier writes.
	write(p []byte) error
	// queueSize is the bytes queued and not yet written.
	queueSize() int
	// shutdown shuts the writing side down once the queue is out.
	shutdown() error
	// refusal is the transport's error for a write (or, with shutdown
	// set, a second shutdown) after its writing side was shut down.
	refusal(shutdown bool) error
	// release frees a kept read buffer.
	release(c chunk)
	addresses() (local, remote net.Addr)
	noDelay(on bool) error
	// keepAlive sets TCP keep-alive (io_tcp.go's SetKeepAliveConfig).
	keepAlive(cfg net.KeepAliveConfig) error
	// readsSettled reports that no read the transport made is still to
	// be delivered: on libuv, none of the turn's records still to
	// dispatch is a read of this stream (libuv reads a readable stream up
	// to 32 times a turn, so a stop comes after reads already recorded),
	// so that a read lane opened now cannot miss bytes read before it.
	// Those records reach received, whose bytes are kept; the lane opens
	// once they are taken.
	readsSettled() bool
	// laneFD is the descriptor a blocking Write may write to from its
	// own goroutine while the loop holds no write (io_lane.go), or -1.
	laneFD() int
}

// chunk is a read buffer kept for a reader to come: b views the bytes not
// yet consumed. The buffer is C memory taken from its record (data and
// release) on the libuv driver, a pooled Go buffer (buf) on the pure-Go one.
type chunk struct {
	data, release uintptr
	buf           *[]byte
	b             []byte
}

// ioOp is one parked operation: a blocking call waits on ch, an async one
// is completed through fut.
type ioOp struct {
	p      []byte // a read's buffer; a write's bytes not yet handed to the transport
	n      int    // bytes read; bytes written (taken at once, or completed)
	err    error
	left   int           // transport writes of this op still in flight
	handed int           // a write's bytes taken at once or handed to the transport
	flying int           // of them, bytes in flight (a windowed write's bound)
	win    bool          // its bytes in flight count in the IO's winFlying
	ch     chan struct{} // the blocked goroutine's wake-up (cap 1)
	fut    settler
	res    func(op *ioOp) any // the future's result
	// ref is the IO of a request in flight (ReadAsync, WriteAsync, Send):
	// while the event holds the op, the op holds the IO, so its reactor
	// keeps it (docs/architecture.md §5) whoever else still points at it.
	ref *IO
}

// settler is the typed future of an async op, seen untyped by the op.
type settler interface {
	settle(v any, err error)
	closed() bool
}

// futureOf adapts an *event.Future[T] to settler.
type futureOf[T any] struct{ f *event.Future[T] }

func (a futureOf[T]) closed() bool { return a.f.Flags().Has(event.Closed) }

func (a futureOf[T]) settle(v any, err error) {
	if err != nil {
		a.f.Reject(err)
		return
	}
	a.f.Resolve(v.(T))
}

var opPool = sync.Pool{New: func() any { return &ioOp{ch: make(chan struct{}, 1)} }}

// blockingOp returns a pooled op for a blocking call on p.
func blockingOp(p []byte) *ioOp {
	op := opPool.Get().(*ioOp)
	op.p = p
	return op
}

// put returns a blocking op to the pool once its goroutine has its outcome.
func (op *ioOp) put() {
	*op = ioOp{ch: op.ch}
	opPool.Put(op)
}

// finish ends the op, on the loop: the waiter may reuse it from now on.
func (op *ioOp) finish(n int, err error) {
	op.n, op.err = n, err
	switch {
	case op.ch != nil:
		op.ch <- struct{}{}
	case op.fut == nil, op.fut.closed():
		// disposed or closed by its holder: nobody hears of it any more
	case err != nil:
		op.fut.settle(nil, err)
	default:
		op.fut.settle(op.res(op), nil)
	}
}

// newIO makes the reference for e, once its core exists.
func newIO(s *uvStream) *IO {
	c := &IO{e: &s.ioEvent}
	s.ref = weak.Make(c)
	track(c, &c.handle, &s.core)
	return c
}

// IOOf returns the IO whose event ev is (as callbacks receive it), or nil
// when ev is no IO's event or its IO was collected.
func IOOf(ev event.Event) *IO {
	// Concrete types, not an interface: a callback calls this for every
	// read, and asserting to an interface looks up a method table.
	switch s := ev.(type) {
	case *IO:
		return s
	case *uvStream:
		return s.ref.Value()
	case *goStream:
		return s.ref.Value()
	}
	return nil
}

func (e *ioEvent) kindName() string { return "io" }

func (e *ioEvent) describe() string {
	where := e.addrs.describe(e)
	if where != "" {
		where = " " + where
	}
	return fmt.Sprintf("IO(%s%s, in=%d, out=%d)", e.transport, where, e.in.Load(), e.out.Load())
}

// exec runs fn on the loop; a closed reactor reads as a closed stream.
func (e *ioEvent) exec(fn func()) error {
	if err := e.r.Call(fn); err != nil {
		return ErrClosed
	}
	return nil
}

// post queues fn on the loop without waiting for it: a blocking call then
// waits only for its op, which fn finishes, one hand-off each way. A closed
// reactor reads as a closed stream (a reactor closing runs what was queued:
// fn then finds the IO closed).
func (e *ioEvent) post(fn func()) error {
	if err := e.r.Post(fn); err != nil {
		return ErrClosed
	}
	return nil
}

// do runs fn on the loop while the IO is open; closed, it is ErrClosed.
func (e *ioEvent) do(fn func() error) error {
	err := ErrClosed
	if x := e.exec(func() {
		if !e.closed {
			err = fn()
		}
	}); x != nil {
		return x
	}
	return err
}

func (e *ioEvent) arm() error {
	e.started = true
	if x := e.rare.Load(); x != nil {
		x.openErr = nil
	}
	e.updateReading()
	if x := e.rare.Load(); x != nil && x.openErr != nil {
		// Reading could not start (openFailure): Start fails with its
		// error, the IO stays stopped, and its stream goes on.
		err := x.openErr
		x.openErr = nil
		e.started = false
		e.updateReading()
		return err
	}
	if err := e.readErr(); err != nil {
		// The stream failed, now or earlier: Start fails with its error
		// and the IO stays stopped.
		e.started = false
		e.updateReading()
		return err
	}
	if len(e.chunks) > 0 || e.rerr != nil && !e.told {
		// Reads kept before Start go to the callbacks first, then the
		// stream's end if it came meanwhile, on a later turn: a
		// notification cannot run inside Start.
		go e.r.Post(e.flush)
	}
	return nil
}

func (e *ioEvent) disarm() {
	e.started = false
	e.updateReading()
}

// readErr is the error a failed uv_read_start left, for Start to return.
func (e *ioEvent) readErr() error {
	if e.rerr != nil && e.rerr != io.EOF {
		return e.rerr
	}
	return nil
}

// updateReading starts or stops libuv's reading to match what is wanted.
func (e *ioEvent) updateReading() {
	// With a read lane, what nobody asks for stays in the kernel: the
	// lane's next Read takes it (io_readlane.go).
	ahead := e.reading && e.kept < readAhead && len(e.chunks) < readAheadChunks && e.rlane.Load() == nil
	want := !e.closed && e.t.open() && e.rerr == nil && (e.delivering() || len(e.readers) > 0 || ahead)
	if want == e.reading {
		if !want {
			e.openReadLane()
		}
		return
	}
	if !want {
		e.reading = false
		e.t.readStop()
		e.openReadLane()
		return
	}
	if !e.shutReadLane() {
		return // a caller's Read holds the lane: it asks again when done
	}
	if err := e.t.readStart(); err != nil {
		if of := (*openFailure)(nil); errors.As(err, &of) {
			e.readOpenFailed(of.err)
			return
		}
		e.endReads(err)
		return
	}
	e.reading = true
}

// delivering reports whether reads go to the callbacks: started, with a
// callback (or a wait) to receive them. A started IO with none reads as a
// stopped one does: a blocking Read takes the bytes, or they wait, kept or
// in the kernel, for the callback to come (subscribed). Nothing is
// notified to nobody.
func (e *ioEvent) delivering() bool { return e.started && eventkind.Callbacks(e.base) > 0 }

// subscribed: a callback joined. A started IO reads on the loop again and
// hands the callbacks what it kept, and the end if it came, in a later turn
// (the callback may have joined inside a notification of this IO).
func (e *ioEvent) subscribed() {
	if !e.started || e.closed {
		return
	}
	if len(e.chunks) > 0 || e.rerr != nil && !e.told {
		kind.HostOf(e.r.Owner()).Queue(e.flush)
	}
	e.updateReading()
}

// readOpenFailed fails the Reads parked on the loop with err, reading
// having failed to start for want of what it needs (openFailure), and
// leaves the stream as it was: the lane opens again for the next Read,
// and arm returns err to Start.
func (e *ioEvent) readOpenFailed(err error) {
	e.extra().openErr = err
	for len(e.readers) > 0 {
		e.popReader().finish(0, err)
	}
	e.openReadLane()
}

// readFailed ends reading with err (io.EOF at the stream's end): the
// parked readers get it, and so do the callbacks of a started IO.
func (e *ioEvent) readFailed(err error) {
	e.endReads(err)
	e.tellEnd()
}

// tellEnd tells the callbacks of a started IO how reading ended, once,
// after the bytes kept before it (a stopped IO is told at its next Start).
func (e *ioEvent) tellEnd() {
	if !e.closed && e.rerr != nil && !e.told && len(e.chunks) == 0 && e.delivering() {
		e.told = true
		eventkind.Notify(e.base, nil, e.rerr)
		e.endReached()
	}
}

// endReached tells a child's Process that its output reached its reader's
// end (see outEnd). Safe from any goroutine.
func (e *ioEvent) endReached() {
	if x := e.rare.Load(); x != nil && x.outEnd != nil {
		x.outEnd.ended()
	}
}

// received hands bytes just read to the parked readers, then to the
// callbacks of a started IO; what they did not take is kept, in the chunk
// keep makes of it (keep is called at most once, and only then does the
// IO own the buffer). A reader's callback may close the IO: the rest is
// then dropped, never kept by an IO whose closing gave its buffers back.
func (e *ioEvent) received(p []byte, keep func(rest []byte) chunk) {
	e.in.Add(uint64(len(p)))
	e.reads.Add(1)
	for len(p) > 0 && e.nextReader() {
		n := copy(e.readers[0].p, p)
		p = p[n:]
		e.popReader().finish(n, nil)
	}
	if e.closed {
		return // a reader's callback closed the IO: the rest is nobody's
	}
	if len(p) > 0 {
		if len(e.chunks) == 0 && e.delivering() {
			e.notifyRead(p)
		} else {
			e.chunks = append(e.chunks, keep(p))
			e.kept += int32(len(p))
			if e.delivering() {
				e.flush()
			}
		}
	}
	e.updateReading()
}

// notifyRead hands p to the callbacks as a *[]byte: a pointer to the IO's
// own view, so that the result goes into the notification's any without
// an allocation (a []byte would be copied to the heap to be boxed). The
// view holds p during the notification only and is cleared after it: a
// result kept past its callback reads as empty, never as a buffer the
// IO has reused or freed. A read notified while another notification
// holds the view (a callback of this IO made it read again) gets a view
// of its own, so the outer callback's p never changes under it.
func (e *ioEvent) notifyRead(p []byte) {
	if e.viewing {
		v := p
		eventkind.Notify(e.base, &v, nil)
		return
	}
	e.view, e.viewing = p, true
	eventkind.Notify(e.base, &e.view, nil)
	e.view, e.viewing = nil, false
}

// connected completes the connect in flight. A failed connect closes the
// IO first, and so does one whose future was closed meanwhile: nobody else
// holds the IO (Dial returns only the error; an abandoned DialAsync, no
// IO), and its handle or descriptor must not wait for the collector.
func (e *ioEvent) connected(err error) {
	if op := e.conn; op != nil {
		e.conn = nil
		eventkind.ActiveDelta(e.r.Owner(), -1)
		if err != nil || op.fut != nil && op.fut.closed() {
			e.base.Close()
		} else {
			e.connReady()
		}
		op.finish(0, err)
	}
}

// connReady sets up a connection that just came to be (connected or
// accepted): TCP's go without Nagle's delay, as package net's do.
func (e *ioEvent) connReady() {
	if e.transport == "tcp" {
		e.t.noDelay(true)
	}
	e.setLane()
}

// flush hands the kept reads to the callbacks, in order, while delivering.
func (e *ioEvent) flush() {
	for !e.closed && len(e.chunks) > 0 && e.delivering() {
		c := e.chunks[0]
		e.chunks = e.chunks[1:]
		e.kept -= int32(len(c.b))
		e.notifyRead(c.b)
		e.t.release(c)
	}
	e.tellEnd()
	e.updateReading()
}

// endReads records how reading ended and tells every parked reader.
func (e *ioEvent) endReads(err error) {
	e.rerr = err
	e.updateReading()
	if len(e.readers) > 0 {
		defer e.endReached()
	}
	for len(e.readers) > 0 {
		e.popReader().finish(0, err)
	}
}

// nextReader drops the parked read requests whose futures their holders
// closed (they take no bytes: the next reader gets them) and reports
// whether a reader is left.
func (e *ioEvent) nextReader() bool {
	for len(e.readers) > 0 {
		if op := e.readers[0]; op.ch != nil || op.fut == nil || !op.fut.closed() {
			return true
		}
		e.popReader()
	}
	return false
}

// dropReader takes op out of the parked readers, if it is still there.
func (e *ioEvent) dropReader(op *ioOp) {
	for i, x := range e.readers {
		if x == op {
			e.readers = slices.Delete(e.readers, i, i+1) // the tail is cleared: no stale op holds its IO
			e.parked.Add(-1)
			eventkind.ActiveDelta(e.r.Owner(), -1)
			e.updateReading()
			return
		}
	}
}

func (e *ioEvent) popReader() *ioOp {
	op := e.readers[0]
	e.readers[0] = nil
	e.readers = e.readers[1:]
	e.parked.Add(-1)
	eventkind.ActiveDelta(e.r.Owner(), -1)
	return op
}

// read serves op from kept bytes or the stream's end, or parks it (only
// when park is set); it reports whether op is done. On the loop.
func (e *ioEvent) read(op *ioOp, park bool) bool {
	switch {
	case e.closed:
		op.err = ErrClosed
	case e.dl.read.expired():
		op.err = errTimeout // past the deadline a read fails, bytes kept or not (as package net's)
	case len(e.chunks) > 0:
		op.n = e.consume(op.p)
		e.updateReading()
	case e.rerr != nil:
		op.err = e.rerr
		e.endReached()
	case !park:
		op.err = fmt.Errorf("uv: IO read with nothing to read: %w", event.ErrOnLoop)
	default:
		// Counted before the deadline is looked at again: a deadline made
		// to pass off the loop meanwhile either sees it parked (and wakes
		// the loop to fail it) or is seen here.
		if e.parked.Add(1); e.dl.read.expired() {
			e.parked.Add(-1)
			op.err = errTimeout
			return true
		}
		e.readers = append(e.readers, op)
		eventkind.ActiveDelta(e.r.Owner(), 1)
		e.updateReading()
		return false
	}
	return true
}

// consume copies kept bytes into p and frees the buffers emptied.
func (e *ioEvent) consume(p []byte) int {
	n := 0
	for n < len(p) && len(e.chunks) > 0 {
		c := &e.chunks[0]
		k := copy(p[n:], c.b)
		n += k
		c.b = c.b[k:]
		if len(c.b) == 0 {
			e.t.release(*c)
			e.chunks[0] = chunk{}
			e.chunks = e.chunks[1:]
		}
	}
	e.kept -= int32(n)
	return n
}

// closing fails every parked operation with ErrClosed and frees the kept
// buffers, before the kit closes the handle. ev is the IO's event, which
// a terminal's drop is reported with.
func (e *ioEvent) closing(ev event.Event) {
	if e.closed {
		return
	}
	e.settleLaneMaking() // the read lane is the loop's to close, if made
	if e.tries > 0 {
		e.t.flushTries() // a Send made before the close goes out before it, as it would have at once
	}
	e.shutLane() // no caller's write is in flight once the descriptor closes
	e.shutReadLane()
	kept := false
	if e.resets() {
		e.dropUnsent() // nothing more goes out: what the IO holds is dropped (io_linger.go)
	} else {
		kept = e.keepUnsent() // what was accepted still goes out (io_linger.go)
	}
	if !kept {
		e.countWritten() // what the transport holds is dropped: report what reached the kernel
		if !e.lingers() {
			e.dropped(ev, e.unwritten(), false, ErrClosed) // a terminal's: as a reset's, not without a word
		}
	}
	e.closed = true
	e.closeDeadlines() // removing a deadline goes to the loop, which refuses
	e.reading = false
	for len(e.readers) > 0 {
		e.popReader().finish(0, ErrClosed)
	}
	for _, op := range e.writes {
		n := op.n
		if kept && op.windowed() {
			// Its bytes handed over go out all the same: those the
			// transport holds linger, the rest are in the kernel,
			// written before their completion came.
			n = op.handed
		}
		// Else n is what reached the kernel (countWritten): the bytes
		// the transport still held are dropped with the close.
		if op.ch != nil || op.fut != nil {
			op.finish(n, ErrClosed)
		}
	}
	e.writes, e.pending, e.fed, e.winFlying = nil, 0, 0, 0
	for _, op := range []*ioOp{e.shut, e.conn} {
		if op != nil {
			op.finish(0, ErrClosed)
		}
	}
	e.failDrains(ErrClosed)
	e.closeDrain()
	if e.conn != nil {
		eventkind.ActiveDelta(e.r.Owner(), -1)
	}
	e.shut, e.conn = nil, nil
	for _, c := range e.chunks {
		e.t.release(c)
	}
	e.chunks, e.kept = nil, 0
	e.endReached()
}
