package uv

import (
	"errors"
	"fmt"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/eventkind"
)

// This file is an IO's high-water mark: Send refuses once the bytes
// queued reach it (Node's writableHighWaterMark), and the drain event
// tells, once the queue fell below it, that sending may resume.

// DefaultHighWaterMark is the high-water mark an IO starts with: Send
// refuses once this many bytes are queued.
const DefaultHighWaterMark = 1 << 20

// ErrQueueFull is Send's refusal when the bytes queued on the IO are at
// its high-water mark or above (see SetHighWaterMark): nothing of the
// refused bytes is written or queued. Send again after OnDrain fires.
var ErrQueueFull = errors.New("uv: Send refused: the IO's queue is at its high-water mark")

// overMark refuses a Send when the queue is at the high-water mark or
// above, and remembers the refusal so that the drain event fires once the
// queue falls below it. On the loop, the IO open and not failed.
func (e *ioEvent) overMark(n int) error {
	if len(e.writes) == 0 {
		return nil // nothing queued: no call to the transport needed
	}
	q := e.queued()
	mark := e.mark()
	if q < mark || q == 0 {
		return nil
	}
	e.extra().refused = true
	return fmt.Errorf("uv: Send of %d bytes with %d queued (high-water mark %d): %w", n, q, mark, ErrQueueFull)
}

// mark is the IO's high-water mark. On the loop.
func (e *ioEvent) mark() int {
	if x := e.rare.Load(); x != nil {
		return x.hwm
	}
	return DefaultHighWaterMark
}

// checkMark fires the drain event when a refused Send may be made again:
// the queue fell below the mark, or the stream failed (its error is the
// notification's). On the loop.
func (e *ioEvent) checkMark() {
	x := e.rare.Load()
	if x == nil || !x.refused || e.closed {
		return
	}
	if e.werr != nil {
		x.refused = false
		e.drained(0, e.werr)
		return
	}
	if q := e.queued(); q < x.hwm {
		x.refused = false
		e.drained(q, nil)
	}
}

// drained notifies the drain event's subscribers, if there are any.
func (e *ioEvent) drained(q int, err error) {
	if x := e.rare.Load(); x != nil && x.drainEv != nil {
		eventkind.Notify(&x.drainEv.Base, q, err)
	}
}

// drainEvent is an IO's drain event: it notifies, with the bytes still
// queued, each time the queue falls below the high-water mark after Send
// refused; it closes with the IO. Go-owned, never started: subscribing is
// all it takes.
type drainEvent struct {
	event.Base
	io *ioEvent
}

type drainOps drainEvent

func (o *drainOps) Owner() event.Owner { return o.io.r.Owner() }
func (o *drainOps) Event() event.Event { return (*drainEvent)(o) }
func (o *drainOps) Arm() error         { return nil }
func (o *drainOps) Disarm()            {}
func (o *drainOps) Free(bool)          {}
func (o *drainOps) Describe() string {
	return fmt.Sprintf("Drain(%s, mark=%d)", o.io.transport, o.io.mark())
}

// Result returns a notification's result as the bytes still queued.
func (d *drainEvent) Result(result any) int { return as[int](result) }

// closeDrain closes the drain event with the IO. On the loop.
func (e *ioEvent) closeDrain() {
	if x := e.rare.Load(); x != nil && x.drainEv != nil {
		d := x.drainEv
		x.drainEv = nil
		d.Close()
	}
}

// SetHighWaterMark sets the bytes queued at which Send refuses with
// ErrQueueFull (DefaultHighWaterMark, 1 MiB, until set): a Send is taken
// whole while fewer are queued, so the queue holds at most the mark plus
// one Send. A mark of 0 refuses every Send while any byte waits. Write
// and WriteAsync are not refused (a blocking Write waits instead). A
// negative mark is refused with an error matching syscall.EINVAL; a
// closed IO with ErrClosed.
func (c *IO) SetHighWaterMark(n int) error {
	if c.zero() {
		return errZero("IO")
	}
	if n < 0 {
		return fmt.Errorf("uv: SetHighWaterMark(%d): %w", n, errInvalid)
	}
	e := c.e
	return e.do(func() error {
		e.extra().hwm = n
		e.checkMark() // a raised mark may let a refused sender go on
		return nil
	})
}

// HighWaterMark returns the mark SetHighWaterMark set.
func (c *IO) HighWaterMark() int {
	if c.zero() {
		return 0
	}
	e := c.e
	n := 0
	e.exec(func() { n = e.mark() })
	return n
}

// OnDrain calls fn on the loop goroutine once the queue has fallen below
// the high-water mark after a Send was refused with ErrQueueFull (Node's
// 'drain'): sending may resume. queued is the bytes still waiting. fn is
// called once per refusal, however many Sends were refused meanwhile; if
// the stream fails instead, fn gets its error. The subscription ends with
// the IO's Close (whose notification is left out unless opts holds
// event.WithClose) or when the returned callback is released.
func (c *IO) OnDrain(fn func(queued int, err error), opts ...event.OnOption) (*event.Callback, error) {
	if c.zero() {
		return nil, errZero("IO")
	}
	e := c.e
	var d *drainEvent
	if err := e.do(func() error {
		x := e.extra()
		if x.drainEv == nil {
			x.drainEv = &drainEvent{io: e}
			eventkind.Init(&x.drainEv.Base, (*drainOps)(x.drainEv), false, event.GoOwned)
		}
		d = x.drainEv
		return nil
	}); err != nil {
		return nil, err
	}
	return event.On[int](d, fn, opts...)
}
