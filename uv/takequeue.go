package uv

import (
	"context"
	"sync"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/eventkind"
	"github.com/uvevent/uvevent/internal/kind"
	"github.com/uvevent/uvevent/reactor"
)

// takeQueue is the blocking side of an event whose results are taken one at
// a time by goroutines that wait for them: a Listener's connections
// (AcceptIO), an IPC's received handles (Receive). It holds the results
// that came while nobody waited, the waits, oldest first, and the callback
// the first wait subscribes to the event.
//
// The results and the waits are under mu, which the loop takes to hand a
// result over and a waiting goroutine takes to take one or to queue
// itself: once the callback is subscribed and the event started
// (serving), a wait makes no round trip through the loop, as package
// net's Accept does not. A result is handed under mu to the oldest wait,
// which mu takes off the list in the same step, so a wait withdrawn (its
// context ended) either is off the list before the result comes, which
// then goes to the next wait or the queue, or has the result.
type takeQueue[T any] struct {
	cb *event.Callback // the first wait's subscription; loop-owned
	// passing: a result is being notified to the event's own callbacks,
	// which own it; cb lets it pass. Loop-owned.
	passing bool
	// flushQueued: a flush of the queue to the callbacks is queued to
	// the loop. Loop-owned.
	flushQueued bool
	// flusher is the event's flush, queued to the loop by subscribed;
	// made once, when the event is.
	flusher func()

	mu      sync.Mutex
	serving bool  // cb is subscribed and the event was started: a wait needs no loop
	closed  bool  // the event closed: every wait gets ErrClosed
	ended   error // results ended (an IPC's pipe): a wait with nothing queued gets it
	queue   []T
	waiters []*takeWait[T]
	// limit bounds the results queued while nobody waits (0: no bound).
	// Once the queue reaches it (full, set by atLimit), the producer
	// stops; the take that brings the queue below it calls drained,
	// after mu is released, for the producer to go on.
	limit   int
	full    bool
	drained func()

	// spare holds the waits over once their goroutine has its result, so
	// that a wait (an accept) allocates nothing (any goroutine).
	spare sync.Pool
}

// takeWait is one goroutine's wait: what it was handed, once ch has a
// value. The rest is for its first step on the loop, when the queue is not
// serving yet: the arguments of wait, what it tells (callErr), and join,
// w.subscribe made once, the function the loop is given.
type takeWait[T any] struct {
	v   T
	err error
	ch  chan struct{}

	h       *takeQueue[T]
	self    event.Event
	fn      event.CallbackFunc
	callErr error
	join    func()
}

// hand gives v and err to the oldest wait, or, when nobody waits, queues v
// (err nil) or drops err (counted by the event's Info). False when the
// queue is closed: v is the caller's to close. On the loop.
func (h *takeQueue[T]) hand(v T, err error) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case h.closed:
		return false
	case len(h.waiters) > 0:
		h.wake(v, err)
	case err == nil:
		h.queue = append(h.queue, v)
	}
	return true
}

// forCallbacks reports whether the next result goes to the event's
// callbacks (notify): it has some besides the queue's own subscription,
// no wait is queued, and nothing is queued either (a result queued while
// callbacks are there waits for the flush to them, and the next ones go
// behind it, in order). Otherwise the queue's subscription takes it, and
// hands it to the oldest wait or queues it: each result has one owner, a
// waiting take first. On the loop.
func (h *takeQueue[T]) forCallbacks(b *event.Base) bool {
	if h.callbacks(b) == 0 {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.waiters) == 0 && len(h.queue) == 0
}

// notify notifies the event's callbacks of res, a result they own: the
// queue's subscription lets it pass. An error (the event closed
// meanwhile) says nobody got it.
func (h *takeQueue[T]) notify(b *event.Base, res any) error {
	h.passing = true
	err := eventkind.Notify(b, res, nil)
	h.passing = false
	return err
}

// callbacks returns how many subscribers the event has besides the
// queue's own subscription: those a result goes to when no wait takes
// it. On the loop.
func (h *takeQueue[T]) callbacks(b *event.Base) int {
	n := eventkind.Callbacks(b)
	if h.cb != nil {
		n--
	}
	return n
}

// subscribed is the event's step when it gains a subscriber (a callback or
// a wait, eventkind.SubscriptionWatcher): the results queued for the
// waits go to the callbacks instead, in order, in a later turn (the
// subscription may come from inside a notification of the event), by
// flusher; pending says the event has something else to tell them after
// the results (an IPC's end). A result queued while the event has
// callbacks (its wait withdrawn after the result was routed to it, or
// results queued before a flush ran) is flushed the same way. On the loop.
func (h *takeQueue[T]) subscribed(r *reactor.Reactor, pending bool) {
	if h.flushQueued {
		return
	}
	h.mu.Lock()
	queued := len(h.queue) > 0
	h.mu.Unlock()
	if queued || pending {
		h.flushQueued = true
		kind.HostOf(r.Owner()).Queue(h.flusher)
	}
}

// flush notifies the callbacks, while the event has some besides the
// queue's own, of the results queued, oldest first, and calls drained
// when that took a full queue below its limit. started reports whether
// the event is started and open: a stopped one keeps them. On the loop.
func (h *takeQueue[T]) flush(b *event.Base, started func() bool, res func(T) any, drop func(T)) {
	h.flushQueued = false
	for started() && h.callbacks(b) > 0 {
		h.mu.Lock()
		if len(h.queue) == 0 {
			h.mu.Unlock()
			return
		}
		v, resume := h.pop()
		h.mu.Unlock()
		if resume {
			h.drained()
		}
		if h.notify(b, res(v)) != nil {
			drop(v)
		}
	}
}

// atLimit reports whether the queue holds limit results or more, and
// then marks it full: the take that brings it below calls drained. On the
// loop.
func (h *takeQueue[T]) atLimit() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.limit > 0 && len(h.queue) >= h.limit {
		h.full = true
	}
	return h.full
}

// wake hands v and err to the oldest wait. Someone must wait; h.mu held.
func (h *takeQueue[T]) wake(v T, err error) {
	var w *takeWait[T]
	w, h.waiters = popFront(h.waiters)
	w.v, w.err = v, err
	w.ch <- struct{}{}
}

// end ends the results with err: every wait gets it, and every later one
// once the queue is empty. On the loop.
func (h *takeQueue[T]) end(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ended == nil {
		h.ended = err
	}
	h.failAll(err)
}

// close ends every wait, and every later one, with ErrClosed, and returns
// the results queued, for the caller to close. On the loop.
func (h *takeQueue[T]) close() []T {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	h.failAll(ErrClosed)
	q := h.queue
	h.queue = nil
	return q
}

// failAll ends every wait with err; h.mu held.
func (h *takeQueue[T]) failAll(err error) {
	for _, w := range h.waiters {
		w.err = err
		w.ch <- struct{}{}
	}
	h.waiters = nil
}

// wait takes the next result of self: a queued one, or the one the next
// call of fn hands on, fn being subscribed to self and self started at the
// first wait (on the loop: the only wait that goes there); or ErrClosed
// when self or its reactor r is closed, or the end's error once nothing is
// queued. When ctx ends first, the wait is withdrawn and ctx's error
// returned, unless a result came meanwhile; a later result goes to the
// next wait. Not on the loop goroutine.
func (h *takeQueue[T]) wait(ctx context.Context, r *reactor.Reactor, self event.Event, fn event.CallbackFunc) (T, error) {
	w, _ := h.spare.Get().(*takeWait[T])
	if w == nil {
		w = &takeWait[T]{ch: make(chan struct{}, 1)}
		w.join = w.subscribe
	}
	h.mu.Lock()
	serving := h.serving
	resume := serving && h.take(w, self)
	h.mu.Unlock()
	if resume {
		h.drained()
	}
	if !serving {
		w.h, w.self, w.fn = h, self, fn
		if x := r.Call(w.join); x != nil || w.callErr != nil {
			// Not queued; w is left to the collector (a Call that failed
			// may not say whether its function ran).
			err := w.callErr
			if x != nil {
				err = ErrClosed
			}
			var zero T
			return zero, err
		}
	}
	select {
	case <-w.ch:
	case <-ctx.Done():
		h.mu.Lock()
		withdrawn := false
		for i, x := range h.waiters {
			if x == w {
				h.waiters = append(h.waiters[:i], h.waiters[i+1:]...)
				h.waiters[len(h.waiters):cap(h.waiters)][0] = nil // not kept by the array
				withdrawn = true
				break
			}
		}
		h.mu.Unlock()
		if withdrawn {
			w.err = ctx.Err()
		} else {
			<-w.ch // handed a result (or an error) meanwhile, under mu: ch has it
		}
	}
	v, err := w.v, w.err
	*w = takeWait[T]{ch: w.ch, join: w.join} // nobody else holds it any more
	h.spare.Put(w)
	return v, err
}

// take is a wait's step once serving: it takes a queued result, or the
// error of a closed or ended queue, or queues the wait; ch has a value
// unless the wait is queued. It reports whether it took a full queue
// below its limit: the caller then calls drained once h.mu is released.
// h.mu held.
func (h *takeQueue[T]) take(w *takeWait[T], self event.Event) (resume bool) {
	switch {
	case h.closed || self.Flags().Has(event.Closed):
		w.err = ErrClosed
	case len(h.queue) > 0:
		w.v, resume = h.pop()
	case h.ended != nil:
		w.err = h.ended
	default:
		h.waiters = append(h.waiters, w)
		return false
	}
	w.ch <- struct{}{}
	return resume
}

// pop takes the oldest queued result, the queue not empty. It reports
// whether that took a full queue below its limit: the caller then calls
// drained once h.mu is released. h.mu held.
func (h *takeQueue[T]) pop() (v T, resume bool) {
	v, h.queue = popFront(h.queue)
	if h.full && len(h.queue) < h.limit {
		h.full, resume = false, true
	}
	return v, resume
}

// popFront returns the first of q, not empty, and the rest, q's array
// keeping no reference to what it returned. Taking the last one leaves q
// empty from its array's start, not its end: a queue that holds one at a
// time (a connection, a waiting Accept) keeps its array from one to the
// next, where cutting off the front would leave no room and the next
// append would allocate.
func popFront[E any](q []E) (E, []E) {
	var zero E
	v := q[0]
	q[0] = zero
	if len(q) == 1 {
		return v, q[:0]
	}
	return v, q[1:]
}

// subscribe is the first wait's step, on the loop: it subscribes the
// callback and starts the event (once), then takes as a serving queue's
// wait does; callErr tells why it could not.
func (w *takeWait[T]) subscribe() {
	h, self := w.h, w.self
	if self.Flags().Has(event.Closed) {
		w.callErr = ErrClosed
		return
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
	h.mu.Lock()
	h.serving = true
	resume := h.take(w, self)
	h.mu.Unlock()
	if resume {
		h.drained()
	}
}
