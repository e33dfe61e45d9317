package async

import (
	"errors"
	"fmt"
	"math"
	"syscall"
	"unsafe"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
)

// ErrChannelClosed: a send on a closed channel, or a receive from a closed
// channel with nothing left in its buffer.
var ErrChannelClosed = errors.New("async: channel closed")

// A Channel is a typed channel of a reactor whose sends and receives are
// events (Ops), so that one wait can mix a receive with a timer, a child's
// completion or another channel. With capacity 0 it is unbuffered: a send
// completes when a receiver takes the value. With capacity n, up to n values
// wait in its buffer.
//
// Values move in FIFO order, senders and receivers are served in the order
// they were started. Close fails the senders waiting and, once the buffer is
// empty, every receive with ErrChannelClosed. A receive nobody will ever
// send to is part of the reactor's deadlock check. Every method is safe from
// any goroutine.
type Channel[T any] struct {
	r      *reactor.Reactor
	cap    int
	buf    []T // loop-owned, like everything below
	recvq  line[T]
	sendq  line[T]
	closed bool
}

// NewChannel returns a channel of r with room for capacity values. Once
// r's Close has begun it refuses with reactor.ErrReactorClosed. A negative
// capacity, or one whose buffer no allocation could hold (where
// make(chan T, capacity) panics), is refused with an error matching
// syscall.EINVAL.
func NewChannel[T any](r *reactor.Reactor, capacity int) (*Channel[T], error) {
	if size := uint64(unsafe.Sizeof(*new(T))); r == nil || capacity < 0 || size > 0 && uint64(capacity) > maxAlloc/size {
		return nil, fmt.Errorf("async: NewChannel(reactor=%t, capacity=%d): %w", r != nil, capacity, syscall.EINVAL)
	}
	if err := closing(r); err != nil {
		return nil, fmt.Errorf("async: NewChannel: %w", err)
	}
	return &Channel[T]{r: r, cap: capacity}, nil
}

// maxAlloc bounds the bytes of a channel's buffer: the Go runtime's
// largest allocation on 64-bit Linux (2^48), or what an int holds.
const maxAlloc = min(1<<48, uint64(math.MaxInt))

// Send returns the event of sending v: it completes (with v) when v is
// buffered or taken by a receiver. Nothing happens until it is started
// (event.Await, or Start).
func (c *Channel[T]) Send(v T) *Op[T] {
	if !c.usable() {
		return &Op[T]{} // refuses everything with event.ErrNilEvent
	}
	return newOp[T](c.r, (*chanSend[T])(c), v)
}

// usable reports whether c is a channel NewChannel made: a nil or zero one
// refuses with event.ErrNilEvent (its Ops too).
func (c *Channel[T]) usable() bool { return c != nil && c.r != nil }

// Recv returns the event of receiving a value: it completes with the value.
// Nothing is taken until it is started (event.Await, or Start).
func (c *Channel[T]) Recv() *Op[T] {
	if !c.usable() {
		return &Op[T]{}
	}
	var zero T
	return newOp[T](c.r, (*chanRecv[T])(c), zero)
}

// Close closes the channel: waiting senders fail, and receivers fail once
// the buffer is empty. Closing twice does nothing.
func (c *Channel[T]) Close() error {
	if !c.usable() {
		return event.ErrNilEvent
	}
	return c.r.Call(func() {
		if c.closed {
			return
		}
		c.closed = true
		var zero T
		for op := c.sendq.pop(); op != nil; op = c.sendq.pop() {
			op.complete(zero, ErrChannelClosed)
		}
		for op := c.recvq.pop(); op != nil; op = c.recvq.pop() {
			op.complete(zero, ErrChannelClosed)
		}
	})
}

// Len returns how many values wait in the buffer.
func (c *Channel[T]) Len() int {
	var n int
	if !c.usable() {
		return 0
	}
	c.r.Call(func() { n = len(c.buf) })
	return n
}

func (c *Channel[T]) describe(what string) string {
	return fmt.Sprintf("Channel.%s(cap=%d, buffered=%d, senders=%d, receivers=%d%s)",
		what, c.cap, len(c.buf), len(c.sendq), len(c.recvq), map[bool]string{true: ", closed"}[c.closed])
}

// chanSend and chanRecv are the channel in its two roles.
type chanSend[T any] Channel[T]
type chanRecv[T any] Channel[T]

func (s *chanSend[T]) arm(op *Op[T]) {
	c := (*Channel[T])(s)
	var zero T
	switch {
	case c.closed:
		op.complete(zero, ErrChannelClosed)
	case len(c.recvq) > 0:
		c.recvq.pop().complete(op.value, nil)
		op.complete(op.value, nil)
	case len(c.buf) < c.cap:
		c.buf = append(c.buf, op.value)
		op.complete(op.value, nil)
	default:
		c.sendq.push(op)
	}
}

func (s *chanSend[T]) disarm(op *Op[T])          { s.sendq.remove(op) }
func (s *chanSend[T]) describe(op *Op[T]) string { return (*Channel[T])(s).describe("Send") }

func (s *chanRecv[T]) arm(op *Op[T]) {
	c := (*Channel[T])(s)
	var zero T
	switch {
	case len(c.buf) > 0:
		v := c.buf[0]
		c.buf[0] = zero
		c.buf = c.buf[1:]
		if snd := c.sendq.pop(); snd != nil { // a waiting sender takes the freed room
			c.buf = append(c.buf, snd.value)
			snd.complete(snd.value, nil)
		}
		op.complete(v, nil)
	case len(c.sendq) > 0:
		snd := c.sendq.pop()
		snd.complete(snd.value, nil)
		op.complete(snd.value, nil)
	case c.closed:
		op.complete(zero, ErrChannelClosed)
	default:
		c.recvq.push(op)
	}
}

func (s *chanRecv[T]) disarm(op *Op[T])          { s.recvq.remove(op) }
func (s *chanRecv[T]) describe(op *Op[T]) string { return (*Channel[T])(s).describe("Recv") }
