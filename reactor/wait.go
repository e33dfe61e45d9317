package reactor

import (
	"context"
	"runtime"
	"sync/atomic"
	"time"

	uvcgo "github.com/uvevent/uvevent/internal/cgo"
	"github.com/uvevent/uvevent/internal/kind"
)

// How the loop waits (docs/architecture.md §2).
//
// With nothing to run, the loop goroutine blocks in the kernel itself: in
// uv_run(UV_RUN_ONCE) on the libuv driver (one cgo call), in epoll_wait on
// the driver's own epoll set on the pure-Go driver (its kind.Kernel, once
// it has descriptors). Nothing stands between the kernel and the loop: no
// goroutine, no netpoller. Another goroutine that queues work wakes it by
// the kernel's Wake (uv_async_send on the keeper, a write to an eventfd),
// which it calls only while the loop sleeps there (sleep == inKernel), and
// only the one goroutine that moves sleep from inKernel to waking: wake-ups
// coalesce.
//
// A wake-up through the kernel costs two OS thread wake-ups, where a
// channel send to a goroutine parked in Go hands over on the sender's own
// thread. So after a wake-up that came from another goroutine the loop
// parks in Go for the next goParkTurns waits (sleep == inGo; senders send
// on wake), the kernel's descriptor watched meanwhile by the watcher
// goroutine through an epoll set of the reactor's own that sits in the
// netpoller, and holds that descriptor only during such a streak
// (wait_linux.go). Calls from other goroutines (X1) stay at channel speed;
// I/O keeps the loop in the kernel.
//
// No wake-up is lost: the loop publishes its sleep state before it looks
// at its queues, stop and context flags one last time, and a sender
// publishes its work before it reads the sleep state (both sequentially
// consistent atomics), so one of the two always sees the other.

// The loop goroutine's sleep states (queues.sleep).
const (
	awake    int32 = iota // running, or about to look at its queues again
	inKernel              // blocked, or about to block, in the kernel's Wait
	inGo                  // parked, or about to park, on the wake channel
	waking                // a sender is calling the kernel's Wake
)

// goParkTurns is how many waits after a wake-up from another goroutine
// park in Go rather than in the kernel (driverState.goPark: tests of the
// wake-up through the kernel set it to 0).
const goParkTurns = 8

// yieldAfter is how long a loop that never parks in Go runs before it
// yields its processor (runtime.Gosched): other goroutines run, and the
// runtime's sysmon, which wakes whenever every processor went idle, stays
// asleep.
const yieldAfter = 2 * time.Millisecond

// signal wakes the loop if it sleeps; wake-ups coalesce. The caller has
// published the reason (a queue's pending flag, stopReq, ctxDone) first.
func (q *queues) signal() {
	switch q.sleep.Load() {
	case inKernel:
		if q.sleep.CompareAndSwap(inKernel, waking) {
			q.kern.Wake()
			q.sleep.Store(awake)
		}
	case inGo:
		select {
		case q.wake <- struct{}{}:
		default:
		}
	}
}

// wakeDue reports whether a reason to wake is published: work queued, a
// Stop, the run's context ended.
func (q *queues) wakeDue() bool {
	return q.pending.Load() || q.turnPending.Load() || q.stopReq.Load() || q.ctxDone.Load()
}

// SetKernel implements kind.Host (the pure-Go driver's epoll set). The
// libuv driver's kernel is libuv itself.
func (h *host) SetKernel(k kind.Kernel) {
	r := (*Reactor)(h)
	if r.loop != nil {
		return
	}
	r.unwatchKernel()
	if k == nil {
		r.kern = nil // an interface holding a nil pointer would be no kernel either
	} else {
		r.kern = k
	}
	r.covered = false
}

// uvKernel is the libuv driver's kernel: a blocking turn of libuv.
type uvKernel struct {
	loop    *uvcgo.Loop
	done    []uvcgo.Completion // what the last Wait reported, for Deliver
	timeout int
}

func (k *uvKernel) Wait(timeoutMS int) bool {
	k.done, k.timeout = k.loop.Wait(timeoutMS)
	return false
}

func (k *uvKernel) Deliver() int { return len(k.done) } // the reactor dispatches (deliverKernel)
func (k *uvKernel) Wake()        { k.loop.Wake() }
func (k *uvKernel) FD() int      { return k.loop.BackendFD() }

// deliverKernel hands what the last kernel Wait collected to the events.
func (r *Reactor) deliverKernel() {
	if k, ok := r.kern.(*uvKernel); ok {
		done := k.done
		k.done = nil
		r.noteTimeout(k.timeout)
		r.work += uint64(len(done))
		r.dispatch(done)
		return
	}
	r.safely(r.deliverGo)
}

// deliverGoKernel is deliverGo's body: the pure-Go driver's kernel
// delivers to its descriptors' events.
func (r *Reactor) deliverGoKernel() {
	if r.kern != nil {
		r.work += uint64(r.kern.Deliver())
	}
}

// wait blocks the loop goroutine until a timer is due, a descriptor is
// ready, an operation is queued, Stop is called or ctx is done; what the
// kernel reported is delivered before it returns.
func (r *Reactor) wait(ctx context.Context) error {
	// ctxDone may be left over from an earlier run (its context's AfterFunc
	// stored it after this run cleared it): ask ctx itself, and clear a
	// stale flag, or wakeDue would keep every later wait from sleeping.
	// ctx's Err is set before its AfterFunc runs, so the second look sees a
	// cancellation that came between the two.
	if r.ctxDone.Load() {
		if err := ctx.Err(); err != nil {
			return err
		}
		r.ctxDone.Store(false)
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	d := r.timeout()
	if r.polling && (d < 0 || d > time.Millisecond) {
		d = time.Millisecond // no watcher: look at the kernel every millisecond
	}
	if d == 0 || r.uvDirty || r.loop != nil && r.loop.Dirty() || r.stopReq.Load() || r.hooks.spinning() {
		r.yieldIfBusy()
		return nil
	}
	if r.kern == nil || r.goTurns > 0 || r.polling {
		return r.parkGo(ctx, d)
	}
	r.yieldIfBusy()
	return r.sleepKernel(ctx, d)
}

// timeout is how long the loop may wait: until the wheel's next timer or
// libuv's next timeout (-1: no limit).
func (r *Reactor) timeout() time.Duration {
	d := time.Duration(-1)
	if due := r.timers.next(); due >= 0 {
		// A far deadline (timeouts reach 292 years) would overflow the
		// Duration: wait at most a day at a time and look again.
		const day = int64(24 * time.Hour / time.Millisecond)
		due = min(due, r.clock()+day)
		d = max(0, time.Until(r.epoch.Add(time.Duration(due)*time.Millisecond)))
	}
	if r.uvDue >= 0 {
		u := max(0, time.Until(r.epoch.Add(time.Duration(r.uvDue)*time.Millisecond)))
		if d < 0 || u < d {
			d = u
		}
	}
	return d
}

// yieldIfBusy lets other goroutines run once the loop has gone yieldAfter
// without parking in Go: a loop that is always busy, or always finds I/O
// ready in the kernel, must not keep its processor from them.
func (r *Reactor) yieldIfBusy() {
	if now := time.Now(); now.Sub(r.yielded) >= yieldAfter {
		runtime.Gosched()
		r.yielded = now
		r.stats.yields.Add(1)
	}
}

// sleepKernel blocks in the kernel's Wait for at most d, then delivers what
// it found.
func (r *Reactor) sleepKernel(ctx context.Context, d time.Duration) error {
	r.unwatchKernel() // a streak of parks in Go is over
	ms := -1
	if d >= 0 {
		ms = int((d + time.Millisecond - 1) / time.Millisecond) // never early: the wheel decides
	}
	r.sleep.Store(inKernel)
	if r.wakeDue() {
		r.wokeUp()
		return ctx.Err()
	}
	r.wd.parking()
	more := r.kern.Wait(ms)
	r.wd.unparked()
	woken := r.wokeUp()
	r.covered = !more
	before := r.work
	r.deliverKernel()
	if woken || r.work != before {
		r.stats.wakeups.Add(1)
	}
	if woken {
		r.goTurns = r.goPark // another goroutine called: park in Go for a while
	}
	if r.ctxDone.Load() {
		return ctx.Err()
	}
	return nil
}

// wokeUp ends a sleep in the kernel: it reports whether a sender woke the
// loop, and waits until that sender's Wake is over, so that nothing calls
// Wake on a kernel the loop may replace or close next.
func (r *Reactor) wokeUp() bool {
	if r.sleep.CompareAndSwap(inKernel, awake) {
		return false
	}
	for r.sleep.Load() != awake {
		runtime.Gosched()
	}
	return true
}

// parkGo parks the loop goroutine in Go for at most d (-1: no limit), on
// the wake channel, the kernel's descriptor watched by the watcher.
func (r *Reactor) parkGo(ctx context.Context, d time.Duration) error {
	if r.goTurns > 0 {
		r.goTurns--
	}
	if r.kern != nil && !r.polling && !r.armWatcher() {
		return nil // the kernel has something already
	}
	r.sleep.Store(inGo)
	if r.wakeDue() {
		r.sleep.Store(awake)
		if r.ctxDone.Load() {
			return ctx.Err()
		}
		return nil
	}
	r.wd.parking()
	woken := true
	if d < 0 {
		<-r.wake
	} else {
		if r.park == nil {
			r.park = time.NewTimer(d)
		} else {
			r.park.Reset(d)
		}
		select {
		case <-r.wake:
			r.park.Stop()
		case <-r.park.C:
			woken = false
		}
	}
	r.wd.unparked()
	r.sleep.Store(awake)
	r.yielded = time.Now()
	// While the watcher watches, readiness would have set fdReady: the
	// next turn need not look at the kernel itself.
	r.covered = r.fdArmed && !r.fdReady.Load()
	if !woken {
		if r.polling {
			r.uvDirty = true
		}
		return nil // turn checks libuv's deadline
	}
	r.stats.wakeups.Add(1)
	if !r.fdReady.Load() {
		r.goTurns = r.goPark // another goroutine called: stay in Go
	}
	if r.ctxDone.Load() {
		return ctx.Err()
	}
	return nil
}

// backendReadable reports whether the kernel's descriptor is readable now:
// the loop's own look at it (one poll(2)).
func (r *Reactor) backendReadable() bool {
	return readable(r.kern.FD(), &r.fdPoll)
}

// armWatcher has the watcher watch the kernel's descriptor before the loop
// parks in Go. While the loop keeps turning the watcher rests, so that busy
// work makes no goroutine hand-off per turn. It reports false, arming
// nothing, if the descriptor is readable already, or if it cannot be
// watched (the loop then looks every millisecond: polling).
func (r *Reactor) armWatcher() bool {
	if !r.watchKernel() {
		return !r.polling
	}
	if r.fdArmed {
		return true
	}
	if r.backendReadable() {
		r.covered = false
		if r.loop != nil {
			r.uvDirty = true
		}
		return false
	}
	r.fdArmed = true
	select {
	case r.fdRearm <- struct{}{}:
	default:
	}
	return true
}

// watch is the watcher goroutine: it sets ready and wakes the loop each
// time the descriptor it watches is readable, then waits until the loop
// parks in Go again (armWatcher) before looking again. It checks the level
// with poll(2), so that an edge consumed by an earlier turn is never lost.
func watch(raw interface {
	Read(func(fd uintptr) bool) error
}, ready *atomic.Bool, wake, rearm chan struct{}) {
	for {
		if _, ok := <-rearm; !ok {
			return
		}
		err := raw.Read(func(fd uintptr) bool {
			var p pollFds
			return readable(int(fd), &p)
		})
		if err != nil {
			return // the reactor closed the descriptor
		}
		ready.Store(true)
		select {
		case wake <- struct{}{}:
		default:
		}
	}
}
