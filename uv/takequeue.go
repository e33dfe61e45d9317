package uv

import (
	"context"
	"sync"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
)

// takeQueue is the blocking side of an event whose results are taken one at
// a time by goroutines that wait for them: a Listener's connections
// (AcceptIO), an IPC's received handles (Receive). It holds the results
// that came while nobody waited, the waits, oldest first, and the callback
// the first wait subscribes to the event. Loop-owned.
type takeQueue[T any] struct {
	cb      *event.Callback
	queue   []T
	waiters []*takeWait[T]
	// spare holds the waits over once their goroutine has its result, so
	// that a wait (an accept) allocates nothing (any goroutine).
	spare sync.Pool
}

// takeWait is one goroutine's wait: what it was handed, once ch has a
// value. The rest is its first step on the loop: the arguments of wait,
// what it tells (callErr), and join, w.enqueue made once, the function
// the loop is given.
type takeWait[T any] struct {
	v   T
	err error
	ch  chan struct{}

	h       *takeQueue[T]
	self    event.Event
	fn      event.CallbackFunc
	end     func() error
	callErr error
	join    func()
}

// idle reports that nobody waits: a result goes to the queue.
func (h *takeQueue[T]) idle() bool { return len(h.waiters) == 0 }

// wake hands v and err to the oldest wait. Someone must wait.
func (h *takeQueue[T]) wake(v T, err error) {
	w := h.waiters[0]
	h.waiters = h.waiters[1:]
	w.v, w.err = v, err
	w.ch <- struct{}{}
}

// failAll ends every wait with err.
func (h *takeQueue[T]) failAll(err error) {
	for _, w := range h.waiters {
		w.err = err
		w.ch <- struct{}{}
	}
	h.waiters = nil
}

// wait takes the next result of self: a queued one, or the one the next
// call of fn hands on, fn being subscribed to self and self started at the
// first wait; or ErrClosed when self or its reactor r is closed. end, on
// the loop, tells an error every wait gets at once while nothing is queued
// (nil: none). When ctx ends first, the wait is withdrawn and ctx's error
// returned, unless a result came meanwhile; a later result goes to the
// next wait. Not on the loop goroutine.
func (h *takeQueue[T]) wait(ctx context.Context, r *reactor.Reactor, self event.Event, fn event.CallbackFunc, end func() error) (T, error) {
	w, _ := h.spare.Get().(*takeWait[T])
	if w == nil {
		w = &takeWait[T]{ch: make(chan struct{}, 1)}
		w.join = w.enqueue
	}
	w.h, w.self, w.fn, w.end = h, self, fn, end
	if x := r.Call(w.join); x != nil || w.callErr != nil {
		// Not queued; w is left to the collector (a Call that failed may
		// not say whether its function ran).
		err := w.callErr
		if x != nil {
			err = ErrClosed
		}
		var zero T
		return zero, err
	}
	select {
	case <-w.ch:
	case <-ctx.Done():
		r.Call(func() {
			for i, x := range h.waiters {
				if x == w {
					h.waiters = append(h.waiters[:i], h.waiters[i+1:]...)
					w.err = ctx.Err()
					w.ch <- struct{}{}
					break
				}
			}
		})
		<-w.ch
	}
	v, err := w.v, w.err
	*w = takeWait[T]{ch: w.ch, join: w.join} // nobody else holds it any more
	h.spare.Put(w)
	return v, err
}

// enqueue is a wait's first step, on the loop: it takes a queued result,
// or the end's error, or queues the wait, subscribing the callback and
// starting the event the first time; callErr tells why it could not.
func (w *takeWait[T]) enqueue() {
	h, self := w.h, w.self
	if self.Flags().Has(event.Closed) {
		w.callErr = ErrClosed
		return
	}
	if len(h.queue) > 0 {
		w.v = h.queue[0]
		h.queue = h.queue[1:]
		w.ch <- struct{}{}
		return
	}
	if w.end != nil {
		if w.err = w.end(); w.err != nil {
			w.ch <- struct{}{}
			return
		}
	}
	if h.cb == nil {
		// Kept only once subscribed and started: a wait whose
		// subscription or Start failed leaves the next wait to try
		// again, instead of waiting on a callback that was never added.
		cb := event.NewCallback(w.fn)
		err := self.AddCallback(cb)
		cb.Release()
		if err != nil {
			w.callErr = err
			return
		}
		if err = self.Start(); err != nil {
			self.DelCallback(cb)
			w.callErr = err
			return
		}
		h.cb = cb
	}
	h.waiters = append(h.waiters, w)
}
