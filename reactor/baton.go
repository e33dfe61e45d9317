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
	co.lent = <-co.run
	if !co.lent {
		loopOwners.CompareAndDelete(co.gid, co.r)
	}
}

// giveBack passes a lent baton on: straight to the next ready coroutine
// while the pass of runReady has steps left (one goroutine hand-off instead
// of two: the loop goroutine stays parked in step), else back to the loop.
// The coroutine's goroutine calls it.
func (co *coroutine) giveBack() {
	if !co.lent {
		return
	}
	co.lent = false
	r := co.r
	c := &r.coros
	c.mu.Lock()
	var next *coroutine
	if c.head < len(c.ready) && c.passes < maxSteps {
		next = c.ready[c.head]
		c.ready[c.head] = nil
		c.head++
		if c.head == len(c.ready) { // empty: schedule appends from the start again
			c.ready, c.head = c.ready[:0], 0
		}
		c.passes++
	}
	c.mu.Unlock()
	if next == nil {
		c.back <- struct{}{}
		return
	}
	next.started()
	r.holder.Store(next.gid)
	next.run <- true
}

// schedule makes the coroutine ready. Ready coroutines run on the loop's
// next turn, from the callback of a hidden zero-timeout timer: never in
// place (a step inside another event's callback pass would run coroutine
// code in the middle of that pass), and never inside a direct operation of
// a goroutine that merely called a method while no loop ran. Once the
// reactor has closed nothing will run a step: the coroutine is woken
// without a baton and runs on as a plain goroutine.
func (co *coroutine) schedule() {
	r := co.r
	c := &r.coros
	c.mu.Lock()
	c.ready = append(c.ready, co)
	arm := !c.armed
	c.armed = true
	c.mu.Unlock()
	if arm {
		if err := r.Post(r.armReady); err != nil {
			r.runReady(nil, nil, err)
		}
	}
}

// armReady starts the hidden timer that runs the ready coroutines; it runs
// with ownership.
func (r *Reactor) armReady() {
	t, err := r.NewTimer(0, 0)
	if err == nil {
		t.SetHidden(true)
		_, err = event.Subscribe(t, r.runReady)
	}
	if err == nil {
		err = t.Start()
	}
	if err != nil {
		r.runReady(nil, nil, err)
	}
}

// runReady steps the ready coroutines, and those they make ready, up to
// maxSteps in one pass: a coroutine woken by another runs at once, with no
// loop turn in between, yet the loop's timers and I/O get their turn every
// maxSteps steps (a new hidden timer then carries on). When err says the
// timer could not fire (the reactor closed), it frees them instead.
func (r *Reactor) runReady(_ event.Event, _ any, err error) {
	c := &r.coros
	c.mu.Lock()
	c.passes = 0
	c.mu.Unlock()
	for {
		c.mu.Lock()
		ready := c.ready[c.head:]
		if len(ready) == 0 || c.passes >= maxSteps {
			c.armed = false
			c.mu.Unlock()
			if len(ready) > 0 {
				r.armAgain()
			}
			return
		}
		c.ready, c.spare, c.head = c.spare[:0], nil, 0 // the two slices take turns
		c.passes += len(ready)
		c.mu.Unlock()
		for i, co := range ready {
			ready[i] = nil
			if err != nil {
				co.run <- false
			} else {
				co.step()
			}
		}
		c.mu.Lock()
		c.spare = ready[:0]
		c.mu.Unlock()
	}
}

// maxSteps bounds the coroutine steps between two loop turns.
const maxSteps = 256

// armAgain arms the timer for coroutines still ready after a full pass.
func (r *Reactor) armAgain() {
	c := &r.coros
	c.mu.Lock()
	arm := !c.armed && len(c.ready) > c.head
	c.armed = c.armed || arm
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
	co.run <- true
	<-r.coros.back // from this coroutine, or the last one the baton passed to
	r.holder.Store(owner)
}

// started: a coroutine about to get the baton for the first time is
// running. (A coroutine woken from a wait stays waiting until its EndWait.)
func (co *coroutine) started() {
	if co.state == coReady {
		co.state = coRunning
	}
}
