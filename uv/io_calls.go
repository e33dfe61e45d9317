package uv

import (
	"context"
	"fmt"
	"io"

	"github.com/uvevent/uvevent/event"
)

// This file holds an IO's calls, made from any goroutine: each runs its
// part on the loop (io.go) and, when it blocks, waits on its op.

// Read reads into p: the bytes kept or the next that arrive, as soon as
// there are any. It blocks the calling goroutine (the reactor must be
// running); on the loop goroutine it never blocks and fails with
// event.ErrOnLoop when nothing has been read yet. At the stream's end it
// returns io.EOF; once closed, an error matching ErrClosed; past the read
// deadline, one matching os.ErrDeadlineExceeded.
func (c *IO) Read(p []byte) (int, error) {
	if c.zero() {
		return 0, errZero("IO")
	}
	if len(p) == 0 {
		return 0, nil
	}
	e := c.e
	if n, ok, err := e.readDirect(p, !e.r.Owner().Owned()); ok {
		if err != nil && err != io.EOF {
			err = c.opError("read", err)
		}
		return n, err
	}
	op := blockingOp(p)
	if e.r.Owner().Owned() {
		e.read(op, false) // on the loop it never parks
	} else if err := e.post(func() {
		e.setReadLane() // the next Reads take the lane (io_readlane.go)
		if e.read(op, true) {
			op.ch <- struct{}{}
		}
	}); err != nil {
		op.put()
		return 0, c.opError("read", err)
	} else {
		<-op.ch
	}
	n, err := op.n, op.err
	op.put()
	if err != nil && err != io.EOF {
		err = c.opError("read", err)
	}
	return n, err
}

// ReadAsync returns a request that completes with up to max bytes (a
// []byte the receiver owns) as soon as there are any, or with io.EOF, the
// stream's error, or ErrClosed. One request takes at most maxReadAsync
// (256 KiB, what an IO keeps read ahead) whatever max is: its buffer is
// made up front, so a huge max must not cost its size.
func (c *IO) ReadAsync(max int) (*event.Future[[]byte], error) {
	if c.zero() {
		return nil, errZero("IO")
	}
	if max <= 0 {
		return nil, fmt.Errorf("uv: ReadAsync(%d): %w", max, errInvalid)
	}
	e := c.e
	f := event.NewFuture[[]byte](e.r.Owner())
	op := &ioOp{p: make([]byte, min(max, maxReadAsync)), fut: futureOf[[]byte]{f}, res: func(op *ioOp) any { return op.p[:op.n] }, ref: c}
	if err := e.exec(func() {
		if e.read(op, true) {
			op.finish(op.n, op.err)
			return
		}
		// Parked: if the holder closes the future first, the request
		// leaves at once (its close is notified on the loop), so that it
		// no longer keeps Run going.
		event.Subscribe(f, func(_ event.Event, _ any, err error) {
			if isClosed(err) {
				e.dropReader(op)
			}
		})
	}); err != nil {
		return nil, err
	}
	return f, nil
}

// Write writes p whole and returns when the socket has taken all of it, or
// the stream failed, closed, or passed its write deadline. Past the
// deadline n is exactly what goes out: the bytes handed to the transport
// (at most writeWindow, 1 MiB, wait there at a time) still go out, the
// rest of p is withdrawn, so retrying p[n:] sends no byte twice. When a
// write error ends it, n is the bytes of p the kernel took, as
// net.TCPConn's Write does. On the loop goroutine it does not wait: it is
// Send.
func (c *IO) Write(p []byte) (int, error) {
	if c.zero() {
		return 0, errZero("IO")
	}
	e := c.e
	if e.r.Owner().Owned() {
		if err := c.Send(p); err != nil {
			return 0, c.opError("write", err)
		}
		return len(p), nil
	}
	// Through the write lane when the loop holds no write: the socket
	// takes p, or the part it takes is the start of what the loop writes.
	k, held := e.writeDirect(p)
	if k == len(p) && len(p) > 0 {
		return k, nil
	}
	op := blockingOp(nil)
	n, err := 0, e.post(func() {
		e.useLane() // the next Writes may go around the loop
		write := e.write
		if held {
			write = func(p []byte, op *ioOp) (int, bool, error) { return e.resume(p, k, op) }
		}
		if n, wait, err := write(p, op); !wait {
			op.n, op.err = n, err
			op.ch <- struct{}{}
		}
	})
	if err == nil {
		<-op.ch
		n, err = op.n, op.err
	} else {
		n = k // the reactor closed: what went out through the lane is all
	}
	op.put()
	if err != nil {
		err = c.opError("write", err)
	}
	return n, err
}

// Send writes p without waiting, from any goroutine (a callback's way to
// answer): what the socket does not take at once is copied and queued. A
// queued write that fails later is reported to the callbacks of a started
// IO, and to every later write. Once the bytes queued reach the IO's
// high-water mark (SetHighWaterMark; 1 MiB by default) Send refuses with
// an error matching ErrQueueFull and writes nothing of p: OnDrain says when
// to send again.
func (c *IO) Send(p []byte) error {
	if c.zero() {
		return errZero("IO")
	}
	if len(p) == 0 {
		return nil
	}
	if c.e.r.Owner().Owned() { // a callback's answer: no closure to allocate
		return c.send(p)
	}
	var err error
	if x := c.e.exec(func() { err = c.send(p) }); x != nil {
		return x
	}
	return err
}

// send is Send with the owner held.
func (c *IO) send(p []byte) error {
	e := c.e
	if !e.closed && e.werr == nil {
		if err := e.overMark(len(p)); err != nil {
			return err
		}
	}
	_, wait, err := e.write(p, nil)
	if wait {
		e.writes[len(e.writes)-1].ref = c // the write in flight holds its IO
	}
	return err
}

// WriteAsync returns a request that completes with len(p) (an int) once the
// socket has taken all of p, or with the error that stopped it (ErrClosed
// when the IO closed first: its bytes then go out in the lingering close,
// or are dropped, as Close says). p is copied
// where it must wait: the caller may reuse it when WriteAsync returns. The
// write deadline bounds the blocking Write only: a request, like Send,
// goes out whole unless the stream fails or closes.
func (c *IO) WriteAsync(p []byte) (*event.Future[int], error) {
	if c.zero() {
		return nil, errZero("IO")
	}
	e := c.e
	f := event.NewFuture[int](e.r.Owner())
	op := &ioOp{fut: futureOf[int]{f}, res: func(op *ioOp) any { return op.n }, ref: c}
	if x := e.exec(func() {
		n, wait, err := e.write(p, op)
		if !wait {
			op.finish(n, err)
		}
	}); x != nil {
		return nil, x
	}
	return f, nil
}

// Queued returns the bytes written but still waiting to go out (in libuv's
// queue, or behind a blocking Write): the measure of backpressure. Send
// refuses once it reaches the IO's high-water mark (SetHighWaterMark) and
// OnDrain says when to resume; a writer with marks of its own stops at its
// high one and resumes when DrainAsync(low) completes.
func (c *IO) Queued() int {
	if c.zero() {
		return 0
	}
	e := c.e
	n := 0
	e.exec(func() { n = e.queued() })
	return n
}

// DrainAsync returns a request that completes, with the bytes still
// queued (an int), once Queued is at or below mark: at once when it is
// already, else when the writes queued go out far enough (Node's 'drain',
// with the low-water mark chosen here). It fails with the stream's write
// error, or ErrClosed when the IO closes first; closing the request drops
// the wait. A negative mark is refused with an error matching
// syscall.EINVAL.
func (c *IO) DrainAsync(mark int) (*event.Future[int], error) {
	if c.zero() {
		return nil, errZero("IO")
	}
	if mark < 0 {
		return nil, errMark(mark)
	}
	e := c.e
	f := event.NewFuture[int](e.r.Owner())
	if x := e.exec(func() {
		e.drain(mark, futureOf[int]{f}, c)
		if !f.Flags().Has(event.Closed) {
			// A wait whose holder closes it leaves at once: it no longer
			// keeps Run going.
			event.Subscribe(f, func(_ event.Event, _ any, err error) {
				if isClosed(err) {
					e.checkDrains()
				}
			})
		}
	}); x != nil {
		return nil, x
	}
	return f, nil
}

// CloseWrite shuts the writing side down once every write asked for before
// it is out (the peer reads io.EOF after the last byte); reading goes on.
// It waits for the shutdown, except on the loop goroutine: there it asks
// for it and returns, and a shutdown that fails later is reported to the
// callbacks of a started IO (CloseWriteAsync is the way to await it from a
// callback). A second CloseWrite fails with ENOTCONN, a write after it
// with EPIPE, as with libuv's uv_shutdown.
func (c *IO) CloseWrite() error {
	if c.zero() {
		return errZero("IO")
	}
	e := c.e
	if e.r.Owner().Owned() {
		if err := e.closeWrite(&ioOp{}); err != nil {
			return c.opError("shutdown", err)
		}
		return nil
	}
	op := blockingOp(nil)
	defer op.put()
	var err error
	if x := e.post(func() {
		if err := e.closeWrite(op); err != nil {
			op.finish(0, err)
		}
	}); x != nil {
		err = x
	} else {
		<-op.ch
		err = op.err
	}
	if err != nil {
		return c.opError("shutdown", err)
	}
	return nil
}

// CloseWriteAsync is CloseWrite as a request: the graceful end of a
// stream (Node's socket.end()). It completes (with nil) once every write
// asked for before it went out and the writing side is shut down, or with
// the error that stopped it: a write that failed, ErrClosed when the IO
// closed first. Await it (event.Await with a context) before Close to be
// sure the peer got every byte; a callback subscribes to it.
func (c *IO) CloseWriteAsync() (*event.Future[struct{}], error) {
	if c.zero() {
		return nil, errZero("IO")
	}
	e := c.e
	f := event.NewFuture[struct{}](e.r.Owner())
	op := &ioOp{fut: futureOf[struct{}]{f}, res: func(*ioOp) any { return struct{}{} }, ref: c}
	var err error
	if x := e.exec(func() { err = e.closeWrite(op) }); x != nil {
		return nil, x
	}
	if err != nil {
		return nil, c.opError("shutdown", err)
	}
	return f, nil
}

// Stats returns the bytes read and written and the reads done so far.
func (c *IO) Stats() (in, out, reads uint64) {
	if c.zero() {
		return 0, 0, 0
	}
	return c.e.in.Load(), c.e.out.Load(), c.e.reads.Load()
}

// awaitOne waits for f on behalf of a blocking call bounded by ctx.
func awaitOne[T any](ctx context.Context, f *event.Future[T]) (T, error) {
	return event.AwaitValue[T](ctx, f)
}

// Close closes the stream now, for every holder, and returns at once:
// parked Reads, Writes and requests fail with ErrClosed (a blocking Write
// with the bytes it wrote, so that a retry of the rest sends none twice:
// on a socket or a pipe those it handed over, which still go out; on a
// terminal, whose close does not linger, or after a write error, those
// that reached the kernel, what the IO still held of it being dropped; the
// rest of it is withdrawn). On a TCP or Unix socket (or a pipe) the bytes accepted before
// it (Send, WriteAsync, a Write's handed-over part) still go out: the loop
// owns a lingering close, which writes them, then closes (the peer reads
// every byte, then the end of the stream), as the kernel does for a
// net.Conn. Past the IO's linger time (SetLinger; DefaultLinger, 10 s) the
// connection is reset instead, so that the peer never takes a truncated
// stream for a whole one, and the drop is reported with its byte count (a
// *DropError, matching ErrDropped). A lingering close keeps Run going and
// the reactor's Close waits for it, within its linger time; Abort cuts it
// short. A terminal's close does not linger: what it drops of the bytes
// accepted is reported the same way (a *DropError, its cause ErrClosed).
// With nothing queued Close ends the stream at once. Closing twice
// is a no-op. The descriptor's last close, where the kernel ends the
// connection, is made on the goroutine that calls Close when the IO has a
// read lane (a blocking Read's; every connection a Listener's Accept
// hands out), as package net makes it; otherwise on the loop. Of Closes
// made at the same time, the one that closes the IO returns once the
// connection has ended; another may return before, as a second Close of a
// net.Conn does.
func (c *IO) Close() error {
	if !c.zero() {
		if l := c.e.rlane.Load(); l != nil {
			return l.closeHandedBack(c.e.r, &c.handle)
		}
	}
	return c.handle.Close()
}
