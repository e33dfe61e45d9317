package reactor

import (
	"context"
	"fmt"
	"math"
	"runtime/debug"
	"time"

	uvcgo "github.com/uvevent/uvevent/internal/cgo"

	"github.com/uvevent/uvevent/event"
)

// How a call drives the loop.
type runMode uint8

const (
	untilIdle runMode = iota // Run: until nothing can happen any more
	oneTurn                  // RunOnce
	noWait                   // RunNoWait
	serve                    // Serve: until Stop or the context ends
)

// Run drives the loop on the calling goroutine until no active event, no
// goroutine run by the reactor and no queued operation remains, or until
// Stop is called or ctx is done (then it returns ctx's error). Callbacks run
// on this goroutine.
func (r *Reactor) Run(ctx context.Context) error { return r.run(ctx, untilIdle) }

// RunOnce runs one turn of the loop: it waits until something is due (a
// timer, I/O, a queued operation) or ctx is done, runs it, and returns.
func (r *Reactor) RunOnce(ctx context.Context) error { return r.run(ctx, oneTurn) }

// RunNoWait runs one turn of the loop without waiting (UV_RUN_NOWAIT): what
// is due now runs, and it returns. With ctx already done it runs nothing
// and returns ctx's error, as Run and RunOnce do.
func (r *Reactor) RunNoWait(ctx context.Context) error { return r.run(ctx, noWait) }

// Alive reports whether the reactor has something that can still happen
// (what uv_run's result says): an active non-hidden event, a request in
// flight, a goroutine it runs, or queued work. Run returns when it has not.
func (r *Reactor) Alive() bool {
	alive := false
	if err := r.Call(func() { alive = !r.idle() }); err != nil {
		return false
	}
	return alive
}

// Now returns the loop clock (uv_now): the time since the reactor was
// created, in milliseconds, as read once per turn. Timers are due on this
// clock. Compute deadlines with it; UpdateTime refreshes it.
func (r *Reactor) Now() time.Duration {
	var now int64
	r.Call(func() { now = r.now() })
	return time.Duration(now) * time.Millisecond
}

// UpdateTime refreshes the loop clock now (uv_update_time), for a callback
// that ran long and computes a deadline from Now. Timer starts do not need
// it: they read the clock afresh.
func (r *Reactor) UpdateTime() { r.Call(func() { r.nowFresh = false }) }

// Serve drives the loop until Stop is called or ctx is done, idle or not;
// an idle reactor parks and uses no CPU.
func (r *Reactor) Serve(ctx context.Context) error { return r.run(ctx, serve) }

// Stop makes the running Run, RunOnce, RunNoWait or Serve return after the current
// turn. Safe from any goroutine; a Stop while the loop is not running makes
// the next run return after its first turn (libuv's uv_stop). A Stop ends
// exactly one run: it is spent when that run returns.
func (r *Reactor) Stop() {
	if r.usable() != nil {
		return
	}
	r.stopReq.Store(true)
	r.signal()
}

func (r *Reactor) run(ctx context.Context, mode runMode) error {
	if err := r.usable(); err != nil {
		return err
	}
	if ctx == nil {
		return fmt.Errorf("reactor: run: %w", event.ErrNilContext)
	}
	me := uintptr(currentGID())
	if r.holder.Load() == me {
		return fmt.Errorf("reactor: run from inside the loop: %w", ErrRunning)
	}
	r.mu.Lock()
	if r.closing.Load() {
		r.mu.Unlock()
		return ErrReactorClosed
	}
	if err := r.acquire(me); err != nil {
		r.mu.Unlock()
		return err
	}
	r.serving = true
	r.mu.Unlock()
	defer func() {
		r.stopReq.Store(false) // a Stop ends exactly one run
		r.release()
	}()
	r.covered = false // nothing says what the kernel holds now
	r.yielded = time.Now()
	if mode == untilIdle || mode == serve {
		defer r.startWatchdog()() // RunOnce and RunNoWait are too short to watch
	}
	// The context wakes the parked loop like any other sender, so that
	// parking waits on one channel (and a timer), not on a select of many.
	r.ctxDone.Store(false)
	if ctx.Done() != nil {
		stop := context.AfterFunc(ctx, func() {
			r.ctxDone.Store(true)
			r.signal()
		})
		defer stop()
	}

	if mode == noWait {
		if err := ctx.Err(); err != nil {
			return err // as Run and RunOnce: a context already done runs nothing
		}
		r.turn()
		return nil
	}
	if mode == oneTurn {
		// Wait until a turn does something: a wake-up can be stale (a
		// Stop or a send consumed by an earlier turn).
		for {
			idle := r.idle()
			before := r.work // a wait in the kernel delivers what it found
			if !idle {
				if err := r.wait(ctx); err != nil {
					return err
				}
			}
			r.turn()
			if r.work != before || idle || r.stopReq.Load() {
				return nil
			}
		}
	}
	if mode == untilIdle && r.idle() {
		// libuv's uv_run on a loop that is not alive returns at once: a
		// reactor whose only events are hidden runs none of them.
		return nil
	}
	for {
		r.turn()
		if r.stopReq.Load() {
			return nil
		}
		if mode == untilIdle && r.idle() {
			return nil
		}
		r.detectDeadlock()
		if err := r.wait(ctx); err != nil {
			return err
		}
	}
}

// The loop clock. One clock serves the timer wheel and the park: Go's
// monotonic clock (CLOCK_MONOTONIC), in milliseconds since the reactor was
// created. libuv keeps its own reading of the same clock (uv_now), which the
// shim refreshes before every call that reads it.

// maxDue is the latest wheel millisecond (146 million years): Close
// advances the wheel to it to close every timer, so no deadline may lie
// beyond it.
const maxDue = 1 << 62

// dueAfter returns the wheel millisecond at which a timer started now with
// timeout d may fire: never before d has passed since this call on the
// monotonic clock (time.AfterFunc's promise), read afresh here rather than
// from the turn's cached clock, so that a start after a long callback or a
// long park counts from the start. A zero timeout is due at once (the next
// turn).
func (r *Reactor) dueAfter(d time.Duration) int64 {
	if d <= 0 {
		return r.now()
	}
	since := time.Since(r.epoch)
	if d > math.MaxInt64-since { // about 292 years: never, as libuv clamps it
		return maxDue
	}
	return min(ms(since+d), maxDue) // ms divides before rounding up: no overflow
}

// turn is one iteration: timers, queued operations, then libuv (I/O and
// close callbacks) and the completions it reported. libuv is turned only
// when it has something to do — its descriptor is readable, a handle was
// created or closed, or it asked to run again — so a turn that only runs
// timers and queued Go work makes no cgo call and no syscall.
func (r *Reactor) turn() {
	r.stats.iterations.Add(1)
	r.nowFresh = false
	r.wd.cur = nil
	if r.timers.count > 0 {
		r.timers.advance(r.now(), r.fireTimer)
	}
	r.drainOnce()
	r.runTurnQueue()
	// Look at the kernel without blocking unless the last wait covered
	// it: a wait in the kernel collected what was ready, and a park in Go
	// with the watcher armed would have been woken by readiness
	// (fdReady). A loop that does not block looks every turn, so busy
	// work never starves I/O (libuv polls on every iteration).
	ready := r.fdReady.Swap(false)
	if ready {
		r.fdArmed = false // the watcher rests until the loop parks in Go again
	}
	look := r.kern != nil && (ready || !r.covered)
	r.covered = false
	if r.loop == nil {
		// The pure-Go driver: no libuv to turn. Its hooks run where the
		// libuv driver's run, in the turn of libuv that ends each
		// iteration (uv_run without waiting: idle, prepare, a poll that
		// does not block, check).
		r.work += r.hooks.run(uvcgo.PhaseIdle)
		r.work += r.hooks.run(uvcgo.PhasePrepare)
		if look && r.kern != nil { // a hook may have closed the last descriptor
			r.kern.Wait(0)
			r.deliverKernel()
		}
		r.work += r.hooks.run(uvcgo.PhaseCheck)
		r.reportFailures()
		if r.wd.reported.Load() != nil {
			r.afterBlock()
		}
		return
	}
	if look && !r.uvDirty && !ready { // already due to turn: no need to look
		ready = r.backendReadable()
	}
	if ready || r.loop.Dirty() || r.everyTurn > 0 || r.uvDue >= 0 && r.now() >= r.uvDue {
		r.uvDirty = true
	}
	if r.uvDirty {
		r.turnUV()
		r.drainOnce()
	}
	r.reportFailures()
	if r.wd.reported.Load() != nil {
		r.afterBlock()
	}
}

func (r *Reactor) fireTimer(t *Timer) {
	r.work++
	r.wd.cur = t
	t.fire()
	r.notified()
}

// turnUV runs libuv once without blocking and dispatches what it reported.
// The records slice points into C memory that the next Turn reuses; that is
// safe because nothing reached from complete can turn the loop again (Run
// refuses to start on the loop goroutine).
func (r *Reactor) turnUV() {
	done, timeout := r.loop.Turn()
	r.noteTimeout(timeout)
	r.work += uint64(len(done))
	r.dispatch(done)
}

// noteTimeout keeps libuv's next timeout, which uv_backend_timeout gives
// relative to the turn that just ended, as an absolute deadline on the loop
// clock: a park that starts later, after other work, still wakes for it.
func (r *Reactor) noteTimeout(timeout int) {
	r.uvDirty = timeout == 0
	if timeout < 0 {
		r.uvDue = -1
		return
	}
	r.uvDue = r.clock() + int64(timeout)
}

// busy reports whether something the loop can see may still happen: an
// active event, a libuv request in flight, or libuv state not yet turned.
func (r *Reactor) busy() bool {
	return r.active > 0 || r.uvDirty || r.loop != nil && (r.loop.Requests() > 0 || r.loop.Dirty())
}

// idle reports whether Run has nothing left to wait for.
func (r *Reactor) idle() bool {
	if r.busy() || len(r.coros.live) > 0 {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.queue) == 0 && len(r.dropped) == 0 && len(r.turnQueue) == 0
}

func panicError(p any) error {
	return &event.PanicError{Value: p, Stack: debug.Stack()}
}
