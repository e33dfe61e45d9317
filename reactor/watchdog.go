package reactor

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/caller"
)

// The watchdog of a blocked loop. While Run, RunOnce, RunNoWait or Serve drives the
// loop, a goroutine looks at the loop's progress every quarter of
// Options.BlockedAfter: a loop that is not parked and has not finished a
// turn since the last look is inside a turn; past the threshold it is
// reported blocked, once per blocking, from the watchdog's goroutine, with
// the callback's location (the first line of user code on the loop
// goroutine's stack) and how long it has blocked. When the callback
// returns, the loop reports again, on its own goroutine, with the event
// whose callback it was: there the report handler may call the event's
// Info (while the loop is blocked, Info would wait for it).
//
// A parked loop cannot be blocked, so the watchdog does not look at it: a
// look that finds the loop parked puts the watchdog to sleep, its ticker
// stopped, and the loop rouses it when its park ends. An idle reactor
// therefore wakes nothing, not even the watchdog's goroutine. Neither side
// misses the other: the watchdog publishes sleeping before it looks at
// parked once more, and the loop clears parked before it looks at sleeping
// (both sequentially consistent atomics).
//
// The watchdog's ticker runs only while the loop is seen turning. When it
// starts, or the loop rouses it, the watchdog asks the loop to tell it of
// its next park (settling), and goes back to sleep when that park comes
// before the first look: a loop woken now and then for a short turn costs
// it no timer, not even a look after the loop's last turn. Roused again
// less than a period after a rouse last ended this way, it keeps
// ticking instead, so that a loop woken again and again (calls from other
// goroutines in a row) does not rouse it, nor tell it, at every wake-up.

// ErrBlocked is the error of a blocked-loop report: it says how long and
// where, and matches ErrBlocked with errors.Is.
var ErrBlocked = fmt.Errorf("reactor: a callback blocked the loop")

// BlockedError is a blocked-loop report's error.
type BlockedError struct {
	For   time.Duration // how long the loop had been blocked when reported
	Where string        // the callback's location: "dir/file.go:line", or "" when unknown
}

// Error says how long the loop was blocked and where, when known.
func (e *BlockedError) Error() string {
	if e == nil {
		return ErrBlocked.Error()
	}
	where := ""
	if e.Where != "" {
		where = " at " + e.Where
	}
	return fmt.Sprintf("reactor: a callback%s has blocked the loop for %v", where, e.For.Round(time.Millisecond))
}

// Is makes a BlockedError match ErrBlocked.
func (e *BlockedError) Is(target error) bool { return e != nil && target == ErrBlocked }

// defaultBlockedAfter is the threshold when Options.BlockedAfter is 0.
const defaultBlockedAfter = time.Second

// watchdog is the loop's side of the watchdog: the loop sets parked around
// its waits and cur around a timer's firing or a completion's delivery;
// iterations (the reactor's counter) tell a turn's progress.
type watchdog struct {
	parked   atomic.Bool
	cur      event.Event  // loop-owned: the event being notified, when known
	blocked  atomic.Int64 // ns the loop has been blocked, once reported (0: not blocked)
	reported atomic.Pointer[BlockedError]
	loopG    int64         // the loop goroutine's number, for its stack
	sleeping atomic.Bool   // the watchdog sleeps until the loop's park ends
	rouse    chan struct{} // one slot: the loop wakes a sleeping watchdog
	looks    atomic.Uint64 // the watchdog's looks at the loop (its ticks)
	rouses   atomic.Uint64 // the loop's rousings of a sleeping watchdog
	settling atomic.Bool   // the watchdog waits for the loop's next park
	settled  chan struct{} // one slot: the loop tells a settling watchdog it parked
}

// parking starts a park of the loop: it sets parked and tells a watchdog
// that waits for the park (settling) that it came.
func (wd *watchdog) parking() {
	wd.parked.Store(true)
	if wd.settling.Load() && wd.settling.CompareAndSwap(true, false) {
		select {
		case wd.settled <- struct{}{}:
		default:
		}
	}
}

// settle has the loop tell the watchdog of its next park. It reports false
// if the loop is parked already (nothing to wait for).
func (wd *watchdog) settle() bool {
	wd.settling.Store(true)
	if wd.parked.Load() {
		if !wd.settling.CompareAndSwap(true, false) {
			<-wd.settled // the loop took it and sends (or has sent) the token
		}
		return false
	}
	return true
}

// unparked ends a park of the loop: it clears parked and rouses a watchdog
// that went to sleep on seeing the loop parked.
func (wd *watchdog) unparked() {
	wd.parked.Store(false)
	if wd.sleeping.Load() && wd.sleeping.CompareAndSwap(true, false) {
		wd.rouses.Add(1)
		select {
		case wd.rouse <- struct{}{}:
		default:
		}
	}
}

// sleep is the watchdog's side of a park: it returns at once if the loop
// is no longer parked, else when the loop's park ends. It reports false
// when the run ended meanwhile (done closed).
func (wd *watchdog) sleep(done chan struct{}) bool {
	wd.sleeping.Store(true)
	if !wd.parked.Load() {
		if !wd.sleeping.CompareAndSwap(true, false) {
			<-wd.rouse // the loop took it and sends (or has sent) the token
		}
		return true
	}
	select {
	case <-done:
		return false
	case <-wd.rouse:
		return true
	}
}

// threshold returns the watchdog's threshold, 0 when disabled.
func (r *Reactor) blockedAfter() time.Duration {
	switch d := r.opts.BlockedAfter; {
	case d < 0:
		return 0
	case d == 0:
		return defaultBlockedAfter
	default:
		return d
	}
}

// startWatchdog starts the watchdog for one run; the returned stop ends it.
func (r *Reactor) startWatchdog() (stop func()) {
	limit := r.blockedAfter()
	if limit == 0 {
		return func() {}
	}
	r.wd.loopG = caller.Goroutine()
	r.wd.sleeping.Store(false)
	r.wd.settling.Store(false)
	r.wd.rouse = make(chan struct{}, 1) // before the watchdog starts, while the loop owns it
	r.wd.settled = make(chan struct{}, 1)
	done, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		r.watchLoop(limit, done)
	}()
	return func() {
		close(done)
		<-exited // no figure of the watcher lands after the run
		r.afterBlock()
		r.wd.blocked.Store(0)
	}
}

func (r *Reactor) watchLoop(limit time.Duration, done chan struct{}) {
	tick := max(limit/4, time.Millisecond)
	t := time.NewTicker(tick)
	t.Stop() // armed below, once the loop is seen turning
	defer t.Stop()
	var last uint64
	var since time.Time  // when the loop was first seen stuck in a turn
	var napped time.Time // when a rouse last ended at the loop's next park
	started, ticking, settling, roused := true, false, false, false
	for {
		if !ticking {
			// Started or roused: unless it was roused less than a period
			// after it last went back to sleep (the loop is woken again and
			// again), the watchdog goes back to sleep as soon as the loop
			// parks (its turn was short), with no look.
			if started || time.Since(napped) >= tick {
				roused = !started
				if !r.wd.settle() {
					if roused {
						napped = time.Now()
					}
					started = false
					if !r.wd.sleep(done) {
						return
					}
					continue
				}
				settling = true
			}
			started, ticking = false, true
			t.Reset(tick) // the loop turns: look from now on
			last, since = r.stats.iterations.Load(), time.Time{}
		}
		select {
		case <-done:
			return
		case <-r.wd.settled:
			settling = false
			if r.wd.parked.Load() {
				t.Stop()
				ticking = false
				if roused {
					napped = time.Now()
				}
				if !r.wd.sleep(done) {
					return
				}
			}
			continue
		case now := <-t.C:
			r.wd.looks.Add(1)
			if r.wd.parked.Load() {
				t.Stop()
				ticking = false
				if settling && !r.wd.settling.CompareAndSwap(true, false) {
					<-r.wd.settled // the loop took it and sends (or has sent) the token
				}
				settling = false
				if !r.wd.sleep(done) {
					return
				}
				continue
			}
			it := r.stats.iterations.Load()
			if it != last {
				last, since = it, time.Time{}
				continue
			}
			if since.IsZero() {
				since = now.Add(-tick) // stuck since at least the last look
				continue
			}
			d := now.Sub(since)
			if d < limit || r.wd.reported.Load() != nil {
				if r.wd.reported.Load() != nil {
					r.wd.blocked.Store(int64(d))
					if r.wd.reported.Load() == nil { // the loop went on meanwhile
						r.wd.blocked.Store(0)
					}
				}
				continue
			}
			e := &BlockedError{For: d, Where: caller.Waiting()[r.wd.loopG]}
			r.wd.blocked.Store(int64(d))
			r.wd.reported.Store(e)
			// The event is not passed: the handler could call its Info,
			// which waits for the blocked loop.
			r.report(nil, "loop blocked", e)
		}
	}
}

// notified ends the notification of r.wd.cur: a block the watchdog
// reported meanwhile is reported again with the event.
func (r *Reactor) notified() {
	if r.wd.reported.Load() != nil {
		r.afterBlock()
	}
	r.wd.cur = nil
}

// afterBlock runs on the loop after a turn: if the watchdog reported the
// turn blocked, the loop reports again with the event, now that its Info
// can be read.
func (r *Reactor) afterBlock() {
	e := r.wd.reported.Load()
	if e == nil {
		return
	}
	r.wd.reported.Store(nil)
	ev := r.wd.cur
	r.wd.blocked.Store(0)
	r.report(ev, "loop was blocked by this event's callback", e)
}

// statsNow fills s with the loop's counters without waiting for a blocked
// loop: once the watchdog has reported the loop blocked, it gives up
// waiting and leaves the loop-owned counters out (Stats.Blocked says why).
func (r *Reactor) statsNow(s *Stats) error {
	limit := r.blockedAfter()
	if limit == 0 || r.ownedByCaller() {
		return r.Call(func() { *s = r.loopStats() })
	}
	if other, ok := loopOwners.Load(uintptr(currentGID())); ok && other != r {
		return r.Call(func() { *s = r.loopStats() }) // ErrOnLoop: it does not wait
	}
	ch := make(chan Stats, 1)
	if err := r.Post(func() { ch <- r.loopStats() }); err != nil {
		return err
	}
	t := time.NewTicker(max(limit/4, time.Millisecond))
	defer t.Stop()
	for {
		select {
		case *s = <-ch:
			return nil
		case <-t.C:
			if r.wd.blocked.Load() > 0 {
				return nil
			}
		}
	}
}
