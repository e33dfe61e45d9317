package reactor

import (
	"errors"
	"fmt"
	"sync"
	"syscall"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/gid"
	"github.com/uvevent/uvevent/internal/waiting"
)

// This file is the reactor's side of event.Owner: who may touch loop state,
// and how other goroutines get work done on the loop.
//
// Ownership belongs to the goroutine running the loop (Run, RunOnce, RunNoWait, Serve)
// for as long as it runs, parked or not. When no goroutine runs the loop, the
// caller of an operation takes ownership for the length of that operation,
// as a libuv program sets up handles before uv_run. Operations from other
// goroutines while someone owns the loop are queued and the owner is woken
// (wake-ups coalesce in a one-slot channel); the owner runs them before it
// lets go. mu guards the queue and the ownership state and is never held
// while user code runs.

func currentGID() gid.ID { return gid.Current() }

// ownedByCaller reports whether the calling goroutine owns the loop now: it is the
// loop goroutine, or inside an operation running directly.
func (r *Reactor) ownedByCaller() bool { return r != nil && r.holder.Load() == uintptr(gid.Current()) }

// Owner returns r as the owner of events: what a kind's Ops.Owner returns
// for an event of r. Its Owned reports whether the calling goroutine owns
// r's loop now (the loop goroutine, or an operation running directly); its
// other methods are event.Owner's. With it r is an event.OwnerSource, so
// event.NewFuture[T](r) makes a future of r.
func (r *Reactor) Owner() event.Owner { return (*owner)(r) }

// owner is the reactor's half that events need (event.Owner, the count and
// the reports of eventkind.OwnerHooks, and the waiter registry of
// internal/waiting), kept off Reactor's own methods as kinds
// keep their Ops on private types.
type owner Reactor

func (o *owner) Owner() event.Owner                           { return o }
func (o *owner) Owned() bool                                  { return (*Reactor)(o).ownedByCaller() }
func (o *owner) Call(fn func()) error                         { return (*Reactor)(o).Call(fn) }
func (o *owner) Post(fn func()) error                         { return (*Reactor)(o).Post(fn) }
func (o *owner) ActiveDelta(n int)                            { (*Reactor)(o).activeDelta(n) }
func (o *owner) Report(ev event.Event, msg string, err error) { (*Reactor)(o).report(ev, msg, err) }
func (o *owner) AddWait(w waiting.State) (remove func())      { return (*Reactor)(o).addWait(w) }

// Call runs fn on the loop and returns when fn has returned (Post is the
// same without the wait): at once when the caller owns the loop, otherwise
// queued (another goroutine owns it) or run here, the caller taking
// ownership for the length of fn (nobody does). A panic in fn is raised
// again in the caller. It returns ErrReactorClosed after Close, and
// ErrOnLoop when the caller owns another reactor's loop (its loop
// goroutine, or a cooperative coroutine of it, which holds its baton):
// waiting for this loop there could deadlock the two loops.
func (r *Reactor) Call(fn func()) error {
	if r == nil || r.wake == nil {
		return ErrZeroReactor
	}
	if fn == nil {
		return errNilFunc
	}
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
	if !r.owned && r.acquiring == 0 {
		r.direct(me, fn)
		return nil
	}
	if other, ok := loopOwners.Load(me); ok && other != r {
		r.mu.Unlock()
		return fmt.Errorf("reactor: Call from the loop goroutine of another reactor (use Post): %w", event.ErrOnLoop)
	}
	c := callPool.Get().(*call)
	c.fn = fn
	r.queue = append(r.queue, c.run)
	r.pending.Store(true)
	r.mu.Unlock()
	r.stats.queued.Add(1)
	r.signal()
	c.done.take()
	p := c.panicked
	c.fn, c.panicked = nil, nil
	callPool.Put(c)
	if p == errGoexit {
		return ErrGoexit
	}
	if p != nil {
		panic(p)
	}
	return nil
}

// errNilFunc refuses a nil operation at Call or Post, rather than let it
// panic later on the loop.
var errNilFunc = fmt.Errorf("reactor: nil function: %w", syscall.EINVAL)

// errGoexit marks a queued operation that called runtime.Goexit.
var errGoexit = new(int)

// ErrGoexit: runtime.Goexit (what t.Fatal does) was called in a queued
// operation, a callback or a coroutine. In an operation or callback it ended
// the goroutine driving the loop: that Run never returns, but the reactor is
// left consistent (ownership released; another Run, Serve or Close may take
// over) and Call returns ErrGoexit. A coroutine that calls it fails with
// ErrGoexit, and the loop carries on.
var ErrGoexit = errors.New("reactor: runtime.Goexit called")

// Post runs fn on the loop without waiting for it: at once when the caller
// owns the loop, queued when another goroutine does, run here (taking
// ownership) when nobody does. A nil fn is refused with an error matching
// syscall.EINVAL, as Call refuses it.
func (r *Reactor) Post(fn func()) error {
	if r == nil || r.wake == nil {
		return ErrZeroReactor
	}
	if fn == nil {
		return errNilFunc
	}
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
	if !r.owned && r.acquiring == 0 {
		// Post never raises a panic in its caller, loop or no loop.
		r.direct(me, func() { r.safely(fn) })
		return nil
	}
	r.enqueueLocked(fn)
	return nil
}

// enqueueLocked queues fn for the loop and wakes it; mu is held on entry
// and released on return.
func (r *Reactor) enqueueLocked(fn func()) {
	r.queue = append(r.queue, fn)
	r.pending.Store(true)
	r.mu.Unlock()
	r.stats.queued.Add(1)
	r.signal()
}

// direct runs fn with ownership while no goroutine runs the loop. mu is held
// on entry; it is released while fn runs (fn is user code: it may call
// Stats, or anything else that takes mu), and operations other goroutines
// queue meanwhile run before ownership is given up, even if fn panics.
func (r *Reactor) direct(me uintptr, fn func()) {
	r.take(me)
	r.mu.Unlock()
	defer r.release()
	r.nowFresh = false // a direct operation reads the clock afresh if it needs it
	fn()
}

// take makes the goroutine me the owner; mu is held.
func (r *Reactor) take(me uintptr) {
	r.owned = true
	r.holder.Store(me)
	// A goroutine may own two reactors at once (a direct operation on one
	// calling into another that nobody runs); the first one it owns stays
	// recorded until it lets go of that one.
	loopOwners.LoadOrStore(me, r)
}

// release gives up ownership. Operations queued up to the last moment run
// first, so none is left waiting for an owner that is gone.
//
// The drain is bounded: operations that keep queueing more (an operation
// re-posting itself through a goroutine) must not keep a goroutine in
// release for ever, holding off a Run or Close that waits for ownership.
// What is left is run by whoever takes ownership next: a waiting Run or
// Close, or else a goroutine started here for that, so that no queued
// Call waits for an owner that never comes.
func (r *Reactor) release() {
	gaveUp := false
	defer func() {
		if !gaveUp {
			// runtime.Goexit in a drained operation is ending this
			// goroutine: give up ownership all the same.
			r.mu.Lock()
			r.letGoLocked()
		}
	}()
	for i := 0; ; i++ {
		r.drainOnce()
		r.mu.Lock()
		if len(r.queue) == 0 && len(r.dropped) == 0 || r.acquiring > 0 || i == releaseRounds-1 {
			break
		}
		r.mu.Unlock()
	}
	gaveUp = true
	r.letGoLocked()
}

// letGoLocked ends ownership; mu is held on entry and released on return.
func (r *Reactor) letGoLocked() {
	left := (len(r.queue) > 0 || len(r.dropped) > 0) && r.acquiring == 0 && !r.closed
	loopOwners.CompareAndDelete(r.holder.Load(), r)
	r.owned, r.serving = false, false
	r.holder.Store(0)
	r.free.Broadcast()
	r.mu.Unlock()
	if left {
		go r.takeOver()
	}
}

// releaseRounds bounds the drain at release (see release).
const releaseRounds = 64

// takeOver takes ownership to run operations a bounded release left.
func (r *Reactor) takeOver() {
	r.mu.Lock()
	if r.owned || r.closed || r.acquiring > 0 || len(r.queue) == 0 && len(r.dropped) == 0 {
		r.mu.Unlock()
		return
	}
	r.direct(uintptr(gid.Current()), func() {})
}

// acquire waits until no operation runs directly, then takes ownership for
// Run or Close. mu is held on entry and on return; it fails when the reactor
// is closed or a loop runs.
func (r *Reactor) acquire(me uintptr) error {
	r.acquiring++ // release hands over instead of draining on (see release)
	for r.owned && !r.serving && !r.closed {
		r.free.Wait()
	}
	r.acquiring--
	switch {
	case r.closed:
		return ErrReactorClosed
	case r.owned:
		return ErrRunning
	}
	r.take(me)
	return nil
}

// loopOwners maps the goroutine owning a reactor to it, so that a blocking
// call from one reactor's loop into another's is refused, not deadlocked.
// A cooperative coroutine is recorded for its whole life, as it runs only
// while it holds the baton (until its reactor closes: see takeBaton).
var loopOwners sync.Map // uintptr (gid) → *Reactor

// call carries a queued Call back to its caller.
type call struct {
	fn       func()
	done     signal // the loop's put wakes the caller (signal.go)
	panicked any
	run      func()
}

var callPool = sync.Pool{New: func() any {
	c := &call{}
	c.done.init()
	c.run = func() {
		returned := false
		defer func() {
			c.panicked = recover()
			if c.panicked == nil && !returned {
				c.panicked = errGoexit // the loop goroutine is ending
			}
			c.done.put(true)
		}()
		c.fn()
		returned = true
	}
	return c
}}

// takeQueueLocked swaps the queue out; mu is held. The spare slice is
// loop-owned, so handing it back (runOps) needs no lock.
func (qs *queues) takeQueueLocked() []func() {
	q := qs.queue
	qs.queue = qs.spare[:0]
	qs.spare = nil
	qs.pending.Store(false)
	return q
}

// runOps runs queued operations on the loop. A panic in a posted operation
// is reported and the rest still run.
func (r *Reactor) runOps(q []func()) {
	r.work += uint64(len(q))
	i := 0
	defer func() {
		if i < len(q) {
			// runtime.Goexit in q[i]: the rest still run, first, at the next drain.
			rest := append([]func(){}, q[i+1:]...)
			r.mu.Lock()
			r.queue = append(rest, r.queue...)
			if len(r.queue) > 0 {
				r.pending.Store(true)
			}
			r.mu.Unlock()
		}
	}()
	for ; i < len(q); i++ {
		fn := q[i]
		q[i] = nil
		r.safely(fn)
	}
	if r.spare == nil {
		r.spare = q[:0]
	}
}

// drain runs every queued operation, including those queued meanwhile, and
// the closes of references dropped without Close. Close and release use it;
// a loop turn uses drainOnce, so that work which keeps queueing more work
// cannot hold the loop in one turn.
func (r *Reactor) drain() {
	for {
		ran := r.pending.Load() && r.drainOnce()
		if r.closing.Load() {
			ran = r.runTurnQueue() || ran // Close runs the kinds' work too
		}
		if !ran {
			return
		}
	}
}

// runTurnQueue runs the work kinds queued with kind.Host.Queue so far: in
// a loop turn (or at Close), never in another goroutine's Call or Post on a
// loop nobody runs (release drains only the operations), as libuv delivers
// only inside uv_run. It reports whether it ran anything.
func (r *Reactor) runTurnQueue() bool {
	if !r.turnPending.Load() {
		return false
	}
	r.mu.Lock()
	q := r.turnQueue
	r.turnQueue = nil
	r.turnPending.Store(false)
	r.mu.Unlock()
	if len(q) == 0 {
		return false
	}
	r.work += uint64(len(q))
	i := 0
	defer func() {
		if i < len(q) {
			// runtime.Goexit in q[i]: the rest run first at the next turn.
			r.mu.Lock()
			r.turnQueue = append(q[i+1:len(q):len(q)], r.turnQueue...)
			r.turnPending.Store(len(r.turnQueue) > 0)
			r.mu.Unlock()
		}
	}()
	for ; i < len(q); i++ {
		r.safely(q[i])
	}
	return true
}

// drainOnce runs the operations queued so far, once: what they queue runs
// on the next turn (as libuv runs its pending callbacks once per turn), so
// timers and I/O keep their turn under any flood. It reports whether it ran
// anything.
func (r *Reactor) drainOnce() bool {
	if !r.pending.Load() {
		return false
	}
	r.mu.Lock()
	// Both slices are taken whole with mu held, and pending cleared with
	// them: what arrives after this sets it again.
	q := r.takeQueueLocked()
	dropped := r.dropped
	r.dropped = nil
	r.mu.Unlock()
	if len(q) == 0 && len(dropped) == 0 {
		return false
	}
	started := false
	j := 0
	defer func() {
		if !started {
			// runtime.Goexit in a dropped event's close notification:
			// the rest of the batch runs at the next drain.
			r.mu.Lock()
			r.dropped = append(r.dropped, dropped[min(j+1, len(dropped)):]...)
			r.queue = append(append([]func(){}, q...), r.queue...)
			r.pending.Store(true)
			r.mu.Unlock()
		}
	}()
	for ; j < len(dropped); j++ {
		r.closeDropped(dropped[j])
	}
	started = true
	r.runOps(q)
	return true
}

func (r *Reactor) safely(fn func()) {
	returned := false
	defer func() {
		if p := recover(); p != nil {
			r.report(nil, "posted operation panicked", panicError(p))
		} else if !returned {
			r.report(nil, "operation called runtime.Goexit", ErrGoexit)
		}
	}()
	fn()
	returned = true
}
