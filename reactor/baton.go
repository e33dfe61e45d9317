package reactor

import (
	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/waiting"
)

// This file is the baton of cooperative coroutines (Spawn). The goroutine
// that owns the loop — the loop goroutine, or the caller of a direct
// operation while no loop runs — lends its ownership to one coroutine at a
// time, and waits until the coroutine gives it back by waiting or
// returning. While it holds the baton the coroutine is the owner: the
// events' methods run at once in it, as they do in a callback.
//
// A coroutine becomes ready when its wait ends: the waker calls schedule.
//
// Only step and giveBack touch the loop kernel's state: the holder of
// ownership (r.holder).

// coopWaiter is the parking waiter (internal/waiting) a cooperative
// coroutine's context carries.
type coopWaiter coroutine

func (w *coopWaiter) BeginWait(events []event.Event, ws waiting.State) {
	(*coWaiter)(w).BeginWait(events, ws)
}

func (w *coopWaiter) EndWait() { (*coWaiter)(w).EndWait() }

// Done returns the coroutine context's done channel: its end aborts the
// current wait (see coroutine.abortWait).
func (w *coopWaiter) Done() <-chan struct{} { return w.done }

// Covers: see coWaiter.Covers.
func (w *coopWaiter) Covers(o event.Owner) bool { return (*coWaiter)(w).Covers(o) }

// Spare keeps the state of the coroutine's last wait for its next one
// (package event's fast path for a wait on one event): a cooperative
// coroutine waits on one thing at a time, from its own goroutine.
func (w *coopWaiter) Spare() *waiting.Spare { return &w.spare }

// Wake returns what makes the coroutine ready: schedule.
func (w *coopWaiter) Wake() func() { return w.wake }

// ParkOne is package event's fast path for a wait on one event of the
// coroutine's reactor, unbounded, with the coroutine's own context, by the
// coroutine holding the baton: BeginWait, Park and EndWait with what that
// makes certain left out. The coroutine owns the loop: the wait is recorded
// in loop-owned fields (abortWait aborts it on the loop), and the wait,
// armed already, resumes the coroutine through Wake's function.
//
// The record's pointers (on, wait) are the same from one such wait to the
// next, and nothing reads them unless the coroutine waits: they are written
// when they change and left in place after the wait (each pointer write
// costs a write barrier while the collector marks).
func (w *coopWaiter) ParkOne(events []event.Event, ws waiting.State) (held bool) {
	co := (*coroutine)(w)
	co.inOne = true
	if co.wait != ws {
		co.wait = ws
	}
	if len(co.on) != len(events) || &co.on[0] != &events[0] {
		co.on = events
	}
	co.state = coWaiting
	co.r.coros.waiting++
	co.giveBack()
	if co.lent = co.run.take(); !co.lent { // takeBaton, one frame less to return through
		co.runOn()
		co.r.Post(co.end) // the reactor has closed: Post refuses, the roll is gone
		return false
	}
	co.inOne = false
	if co.state == coWaiting { // else the deadlock check ended the wait
		co.state = coRunning
		co.r.coros.waiting--
	}
	return true
}

// Parks reports whether the caller is the coroutine itself, holding the
// baton: only then does Await park through it.
func (w *coopWaiter) Parks() bool {
	co := (*coroutine)(w)
	return uintptr(currentGID()) == co.gid && co.lent // lent is the coroutine goroutine's own
}

// Park gives the baton back until the wait ends and the loop lends it
// again.
func (w *coopWaiter) Park(wait interface{ Arm(resume func()) }) {
	co := (*coroutine)(w)
	wait.Arm(co.wake)
	co.giveBack()
	co.takeBaton()
}

// takeBaton waits until the loop lends the baton, or lets the coroutine run
// on without it (the reactor closed): it is then a plain goroutine, no
// longer one of the reactor's owners. The coroutine's goroutine calls it.
func (co *coroutine) takeBaton() {
	if co.lent = co.run.take(); !co.lent {
		co.runOn()
	}
}

// runOn: the coroutine runs on without the baton, no longer one of the
// reactor's owners.
func (co *coroutine) runOn() { loopOwners.CompareAndDelete(co.gid, co.r) }

// giveBack passes a lent baton on: straight to the next ready coroutine
// while the pass of runReady has steps left (one goroutine hand-off instead
// of two: the loop goroutine stays parked in step), else back to the loop.
// The coroutine's goroutine calls it, holding the baton.
func (co *coroutine) giveBack() {
	if !co.lent {
		return
	}
	co.lent = false
	r := co.r
	next := r.coros.next()
	if next == nil {
		r.coros.back.put(true)
		return
	}
	next.started()
	r.holder.Store(next.gid)
	next.run.put(true)
}

// schedule makes the coroutine ready. Ready coroutines run on the loop's
// next turn, from the callback of a hidden zero-timeout timer: never in
// place (a step inside another event's callback pass would run coroutine
// code in the middle of that pass), and never inside a direct operation of
// a goroutine that merely called a method while no loop ran. Once the
// reactor has closed nothing will run a step: the coroutine is woken
// without a baton and runs on as a plain goroutine.
//
// The loop's owner during a pass of runReady (a coroutine holding the
// baton, most often: it resolved what another one waits for) puts it in
// the pass's own list, which only the owner touches: no lock, and the pass
// runs it.
func (co *coroutine) schedule() {
	r := co.r
	c := &r.coros
	if r.ownedByCaller() && c.inPass { // inPass is the owner's: read it only as the owner
		c.run = append(c.run, co)
		return
	}
	c.mu.Lock()
	c.ready = append(c.ready, co)
	arm := !c.armed
	c.armed = true
	c.mu.Unlock()
	if arm {
		if err := r.Post(c.arm); err != nil {
			r.freeReady(err)
		}
	}
}

// armReady starts the hidden timer that runs the ready coroutines; it runs
// with ownership. The timer is made once, on the first wake, and started
// again for every later one (a fired one-shot timer is stopped, not
// closed): making a coroutine ready allocates nothing.
func (r *Reactor) armReady() {
	c := &r.coros
	var err error
	if c.timer == nil {
		var t *Timer
		if t, err = r.NewTimer(0, 0); err == nil {
			t.SetHidden(true)
			if _, err = event.Subscribe(t, r.runReady); err == nil {
				c.timer = t
			}
		}
	}
	if err == nil {
		err = c.timer.Start()
	}
	if err != nil {
		r.runReady(nil, nil, err)
	}
}

// runReady steps the ready coroutines, and those they make ready, up to
// maxSteps in one pass, in the order they became ready: a coroutine woken
// by another runs at once, with no loop turn in between, yet the loop's
// timers and I/O get their turn every maxSteps steps (a new hidden timer
// then carries on). When err says the timer could not fire (the reactor
// closed), it frees them instead. It runs with ownership.
func (r *Reactor) runReady(_ event.Event, _ any, err error) {
	c := &r.coros
	if err != nil {
		for _, co := range c.run[c.head:] {
			co.run.put(false)
		}
		clear(c.run)
		c.run, c.head = c.run[:0], 0
		r.freeReady(err)
		return
	}
	c.passes, c.inPass = 0, true
	c.takeReady() // a pass's list that never runs dry must not shut them out
	for co := c.next(); co != nil; co = c.next() {
		co.step()
	}
	c.inPass = false
	c.mu.Lock()
	left := len(c.ready) > 0 || c.head < len(c.run)
	c.armed = false
	c.mu.Unlock()
	if left {
		r.armAgain()
	}
}

// next takes the coroutine to run next in this pass of runReady, nil when
// the pass is over: none is ready, or the pass has had its maxSteps. Those
// made ready elsewhere join the pass's list when the pass begins and when
// the list runs dry: two coroutines that make each other ready keep it
// from running dry, and the pass's bound then brings the others in. It
// runs with ownership.
func (c *coroutines) next() *coroutine {
	if !c.inPass || c.passes >= maxSteps {
		return nil
	}
	if c.head == len(c.run) {
		c.takeReady()
		if c.head == len(c.run) {
			return nil
		}
	}
	co := c.run[c.head]
	c.run[c.head] = nil
	if c.head++; c.head == len(c.run) { // empty: append from the start again
		c.run, c.head = c.run[:0], 0
	}
	c.passes++
	return co
}

// takeReady moves the coroutines made ready elsewhere to the end of the
// pass's list. It runs with ownership.
func (c *coroutines) takeReady() {
	c.mu.Lock()
	c.run = append(c.run, c.ready...)
	clear(c.ready)
	c.ready = c.ready[:0]
	c.mu.Unlock()
}

// freeReady lets the coroutines made ready elsewhere run on without the
// baton: the reactor has closed, nothing will run a pass.
func (r *Reactor) freeReady(err error) {
	c := &r.coros
	c.mu.Lock()
	ready := c.ready
	c.ready = nil
	c.armed = false
	c.mu.Unlock()
	for _, co := range ready {
		co.run.put(false)
	}
}

// maxSteps bounds the coroutine steps between two loop turns.
const maxSteps = 256

// armAgain arms the timer for coroutines still ready after a full pass.
func (r *Reactor) armAgain() {
	c := &r.coros
	c.mu.Lock()
	arm := !c.armed
	c.armed = true
	c.mu.Unlock()
	if arm {
		r.armReady()
	}
}

// step lends the baton to the coroutine until it gives it back. It runs
// with ownership, among the loop's queued operations.
func (co *coroutine) step() {
	r := co.r
	co.started()
	owner := r.holder.Load()
	r.holder.Store(co.gid)
	co.run.put(true)
	r.coros.back.take() // from this coroutine, or the last one the baton passed to
	r.holder.Store(owner)
}

// started: a coroutine about to get the baton for the first time is
// running. (A coroutine woken from a wait stays waiting until its EndWait.)
func (co *coroutine) started() {
	if co.state == coReady {
		co.state = coRunning
	}
}
