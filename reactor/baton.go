package reactor

import "github.com/uvevent/uvevent/event"

// This file is the baton of cooperative coroutines (Spawn). The goroutine
// that owns the loop — the loop goroutine, or the caller of a direct
// operation while no loop runs — lends its ownership to one coroutine at a
// time, and waits until the coroutine gives it back by waiting or
// returning. While it holds the baton the coroutine is the owner: the
// events' methods run at once in it, as they do in a callback.
//
// A coroutine becomes ready when its wait ends: the waker calls schedule.
//
// Only step touches the loop kernel's state: the holder of ownership.

// coopWaiter is the event.Parker a cooperative coroutine's context carries.
type coopWaiter coroutine

func (w *coopWaiter) BeginWait(events []event.Event, ws event.WaitState) {
	(*coWaiter)(w).BeginWait(events, ws)
}

func (w *coopWaiter) EndWait() { (*coWaiter)(w).EndWait() }

// Parks reports whether the caller is the coroutine itself, holding the
// baton: only then does Await park through it.
func (w *coopWaiter) Parks() bool {
	co := (*coroutine)(w)
	return co.lent && uintptr(currentGID()) == co.gid
}

// Park gives the baton back until the wait ends and the loop lends it
// again.
func (w *coopWaiter) Park(arm func(resume func())) {
	co := (*coroutine)(w)
	arm(co.schedule)
	co.giveBack()
	co.lent = <-co.run
}

// giveBack returns a lent baton; the coroutine's goroutine calls it.
func (co *coroutine) giveBack() {
	if co.lent {
		co.lent = false
		co.yield <- struct{}{}
	}
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

// runReady steps every ready coroutine, or, when err says the timer could
// not fire (the reactor closed), frees them.
func (r *Reactor) runReady(_ event.Event, _ any, err error) {
	c := &r.coros
	c.mu.Lock()
	ready := c.ready
	c.ready, c.armed = nil, false
	c.mu.Unlock()
	for _, co := range ready {
		if err != nil {
			co.run <- false
		} else {
			co.step()
		}
	}
}

// step lends the baton to the coroutine until it gives it back. It runs
// with ownership, among the loop's queued operations.
func (co *coroutine) step() {
	r := co.r
	if co.state == coReady {
		co.state = coRunning
	}
	owner := r.holder.Load()
	r.holder.Store(co.gid)
	co.run <- true
	<-co.yield
	r.holder.Store(owner)
}
