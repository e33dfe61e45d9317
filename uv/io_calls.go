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
	op := blockingOp(p)
	if e.r.Owner().Owned() {
		e.read(op, false) // on the loop it never parks
	} else if err := e.post(func() {
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
// stream's error, or ErrClosed.
func (c *IO) ReadAsync(max int) (*event.Future[[]byte], error) {
	if c.zero() {
		return nil, errZero("IO")
	}
	if max <= 0 {
		return nil, fmt.Errorf("uv: ReadAsync(%d): %w", max, errInvalid)
	}
	e := c.e
	f := event.NewFuture[[]byte](e.r.Owner())
	op := &ioOp{p: make([]byte, max), fut: futureOf[[]byte]{f}, res: func(op *ioOp) any { return op.p[:op.n] }, ref: c}
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
// the stream failed, closed, or passed its write deadline (then n says how
// much was written). On the loop goroutine it does not wait: it is Send.
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
	op := blockingOp(nil)
	n, err := 0, e.post(func() {
		if n, wait, err := e.write(p, op); !wait {
			op.n, op.err = n, err
			op.ch <- struct{}{}
		}
	})
	if err == nil {
		<-op.ch
		n, err = op.n, op.err
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
// IO, and to every later write.
func (c *IO) Send(p []byte) error {
	if c.zero() {
		return errZero("IO")
	}
	if len(p) == 0 {
		return nil
	}
	e := c.e
	var err error
	if x := e.exec(func() {
		var wait bool
		if _, wait, err = e.write(p, nil); wait {
			e.writes[len(e.writes)-1].ref = c // the write in flight holds its IO
		}
	}); x != nil {
		return x
	}
	return err
}

// WriteAsync returns a request that completes with len(p) (an int) once the
// socket has taken all of p, or with the error that stopped it. p is copied
// where it must wait: the caller may reuse it when WriteAsync returns.
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

// Queued returns the bytes written but still waiting in libuv for the
// socket: the measure of backpressure.
func (c *IO) Queued() int {
	if c.zero() {
		return 0
	}
	e := c.e
	n := 0
	e.exec(func() {
		if e.t.open() && !e.closed {
			n = e.t.queueSize()
		}
	})
	return n
}

// CloseWrite shuts the writing side down once the queued writes are out
// (the peer reads io.EOF); reading goes on. It waits for the shutdown,
// except on the loop goroutine.
func (c *IO) CloseWrite() error {
	if c.zero() {
		return errZero("IO")
	}
	e := c.e
	op := blockingOp(nil)
	defer op.put()
	wait := !e.r.Owner().Owned()
	var err error
	if x := e.exec(func() {
		switch {
		case e.closed:
			err = ErrClosed
		case e.shut != nil:
			err = fmt.Errorf("uv: CloseWrite: a shutdown is in flight: %w", errInvalid)
		default:
			if err = e.t.shutdown(); err == nil && wait {
				e.shut = op
			}
		}
	}); x != nil {
		err = x
	}
	if err == nil && wait {
		<-op.ch
		err = op.err
	}
	if err != nil {
		return c.opError("shutdown", err)
	}
	return nil
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
