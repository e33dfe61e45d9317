package reactor

import (
	"sync"

	"github.com/uvevent/uvevent/internal/gid"
)

// This file is the reactor's side of event.Owner: who may touch loop state,
// and how other goroutines get work done on the loop.
//
// Ownership belongs to the goroutine running the loop (Run, RunOnce, Serve)
// for as long as it runs, parked or not. When no goroutine runs the loop, the
// caller of an operation takes ownership for the length of that operation
// (under mu), as a libuv program sets up handles before uv_run. Operations
// from other goroutines while the loop runs are queued and the loop is woken;
// wake-ups coalesce in a one-slot channel.

func currentGID() gid.ID { return gid.Current() }

// Owned reports whether the calling goroutine owns the loop now: it is the
// loop goroutine, or inside an operation running directly.
func (r *Reactor) Owned() bool { return r.holder.Load() == uintptr(gid.Current()) }

// Exec runs fn on the loop and returns when fn has returned: at once when
// the caller owns the loop, otherwise queued (the loop runs) or directly
// under the reactor's lock (it does not). A panic in fn is raised again in
// the caller. It returns ErrReactorClosed after Close.
func (r *Reactor) Exec(fn func()) error {
	me := uintptr(gid.Current())
	if r.holder.Load() == me {
		fn()
		return nil
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return ErrReactorClosed
	}
	if !r.running {
		r.direct(me, fn)
		return nil
	}
	c := callPool.Get().(*call)
	c.fn = fn
	r.queue = append(r.queue, c.run)
	r.pending.Store(true)
	r.mu.Unlock()
	r.stats.queued.Add(1)
	r.signal()
	<-c.done
	p := c.panicked
	c.fn, c.panicked = nil, nil
	callPool.Put(c)
	if p != nil {
		panic(p)
	}
	return nil
}

// Post runs fn on the loop without waiting for it: at once when the caller
// owns the loop or nobody runs it, otherwise queued.
func (r *Reactor) Post(fn func()) error {
	me := uintptr(gid.Current())
	if r.holder.Load() == me {
		fn()
		return nil
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return ErrReactorClosed
	}
	if !r.running {
		r.direct(me, fn)
		return nil
	}
	r.queue = append(r.queue, fn)
	r.pending.Store(true)
	r.mu.Unlock()
	r.stats.queued.Add(1)
	r.signal()
	return nil
}

// direct runs fn with ownership while nobody runs the loop. mu is held on
// entry and released on return, even if fn panics.
func (r *Reactor) direct(me uintptr, fn func()) {
	r.holder.Store(me)
	defer func() {
		r.holder.Store(0)
		r.mu.Unlock()
	}()
	r.nowFresh = false // a direct operation reads the clock afresh if it needs it
	fn()
}

// signal wakes the loop if it is parked; wake-ups coalesce.
func (r *Reactor) signal() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// call carries a queued Exec back to its caller.
type call struct {
	fn       func()
	done     chan struct{}
	panicked any
	run      func()
}

var callPool = sync.Pool{New: func() any {
	c := &call{done: make(chan struct{}, 1)}
	c.run = func() {
		defer func() {
			c.panicked = recover()
			c.done <- struct{}{}
		}()
		c.fn()
	}
	return c
}}

// takeQueueLocked swaps the queue out; mu is held. The spare slice is
// loop-owned, so handing it back (runOps) needs no lock.
func (r *Reactor) takeQueueLocked() []func() {
	q := r.queue
	r.queue = r.spare[:0]
	r.spare = nil
	r.pending.Store(false)
	return q
}

// runOps runs queued operations on the loop. A panic in a posted operation
// is reported and the rest still run.
func (r *Reactor) runOps(q []func()) {
	r.work += uint64(len(q))
	for i, fn := range q {
		q[i] = nil
		r.safely(fn)
	}
	if r.spare == nil {
		r.spare = q[:0]
	}
}

// drain runs every queued operation, including those queued meanwhile, and
// the closes of references dropped without Close.
func (r *Reactor) drain() {
	for r.pending.Load() {
		r.mu.Lock()
		q := r.takeQueueLocked()
		dropped := r.dropped
		r.dropped = nil
		r.mu.Unlock()
		if len(q) == 0 && len(dropped) == 0 {
			return
		}
		for _, id := range dropped {
			r.closeDropped(id)
		}
		r.runOps(q)
	}
}

func (r *Reactor) safely(fn func()) {
	defer func() {
		if p := recover(); p != nil {
			r.Report(nil, "posted operation panicked", panicError(p))
		}
	}()
	fn()
}
