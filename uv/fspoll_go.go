package uv

// The pure-Go driver's fs poll: what libuv's src/fs-poll.c does, written
// with the reactor's parts. A hidden one-shot timer of the reactor starts
// each stat; the stat is a Stat request (DefaultTaskPool's job, as every
// file system request of this driver); its completion, on the loop,
// compares it with the last (libuv's poll_cb) and sets the timer for the
// next, interval after the start of this one, less the time it took.

import (
	"context"
	"fmt"
	"io/fs"
	"syscall"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/eventkind"
	"github.com/uvevent/uvevent/internal/kind"
	"github.com/uvevent/uvevent/reactor"
)

// goFSPoll is the pure-Go driver's poll. Its fields are touched on the
// loop.
type goFSPoll struct {
	event.Base
	fsPollState
	keeper
	r      *reactor.Reactor
	forget func() // unregisters the reactor's closer

	timer *reactor.Timer          // starts the next stat; made at the first Start
	stat  *FSRequest[fs.FileInfo] // the stat in flight, or nil
	run   uint64                  // counts Starts after a Stop: a stat of an earlier run reports nothing
	began time.Duration           // the loop's clock when the stat in flight began

	// libuv's poll context, reset at each Start: last is the last
	// successful stat (nil before one); status is 0 before the first stat
	// returned, 1 after a successful one, the negated errno after a failed
	// one (libuv's busy_polling).
	last   *syscall.Stat_t
	status int
}

type goFSPollOps goFSPoll

func newGoFSPoll(r *reactor.Reactor, s fsPollState) (*FSPoll, error) {
	e := &goFSPoll{fsPollState: s, r: r}
	eventkind.Init(&e.Base, (*goFSPollOps)(e), true, event.GoOwned)
	var err error
	if x := r.Call(func() {
		if err = armable(r); err != nil {
			return
		}
		host := kind.HostOf(r.Owner())
		if e.timer, err = r.NewTimer(s.interval, 0); err != nil {
			return
		}
		e.timer.SetHidden(true) // the poll, started, is what keeps Run going
		e.timer.OnFire(func(err error) {
			if err == nil && eventkind.LoopRefs(e) > 0 && !e.Flags().Has(event.Closed) {
				e.statNow()
			}
		})
		// As for a Trigger: the closer holds the event, not the FSPoll,
		// so a dropped FSPoll is collected and its cleanup closes the
		// event; the reactor's Close closes one still open.
		e.forget = host.AddCloser(func() { e.Close() })
		host.CountHandle(e.kindName(), 1)
	}); x != nil {
		err = x
	}
	if err != nil {
		return nil, fmt.Errorf("uv: NewFSPoll: %w", err)
	}
	p := &FSPoll{e: &e.fsPollState}
	trackGo(p, &p.handle, r, e)
	return p, nil
}

// statNow starts a stat of the path for the current run.
func (e *goFSPoll) statNow() {
	run := e.run
	e.began = e.r.Now()
	q, err := Stat(context.Background(), e.r, e.path)
	if err != nil {
		return // the reactor is closing, and the poll with it
	}
	e.stat = q
	q.OnDone(func(fi fs.FileInfo, err error) {
		if e.stat == q {
			e.stat = nil
		}
		if run != e.run || eventkind.LoopRefs(e) == 0 || e.Flags().Has(event.Closed) {
			return
		}
		e.observe(fi, err)
		if run == e.run { // not stopped (and started again) by a callback
			e.next()
		}
	})
}

// next sets the timer for the next stat, interval after the start of the
// last one (a stat that took longer than an interval is followed by the
// next at the next multiple of it), as libuv does.
func (e *goFSPoll) next() {
	wait := e.interval - (e.r.Now()-e.began)%e.interval
	e.timer.Reset(wait) // starts it again
}

// observe compares a stat with the last, as libuv's poll_cb: the first
// success is the baseline; a change, or a success after a failure, is
// reported with both stats; a failure is reported when its error is not
// the last one's. The state is updated before the callbacks run, which
// may stop and start the poll again.
func (e *goFSPoll) observe(fi fs.FileInfo, err error) {
	res := FSPollResult{Prev: e.info(e.last)}
	if err != nil {
		status := -int(errnoOf(err))
		if e.status == status {
			return
		}
		e.status = status
		eventkind.Notify(&e.Base, res, e.failure(status))
		return
	}
	st, _ := fi.Sys().(*syscall.Stat_t)
	if st == nil {
		return
	}
	changed := e.status < 0 || e.status > 0 && !sameStat(e.last, st)
	e.last, e.status = st, 1
	if changed {
		res.Curr = e.info(st)
		eventkind.Notify(&e.Base, res, nil)
	}
}

// halt ends the run: the timer stopped, a stat in flight closed (if the
// pool has not started it, it never runs).
func (e *goFSPoll) halt() {
	e.run++
	e.timer.Stop()
	if q := e.stat; q != nil {
		e.stat = nil
		q.Close()
	}
}

// Arm starts a run with a new baseline: the first stat now.
func (o *goFSPollOps) Arm() error {
	if err := o.startable(o.r); err != nil {
		return err
	}
	e := (*goFSPoll)(o)
	e.last, e.status = nil, 0
	e.statNow()
	o.holdRef()
	return nil
}

// Disarm stops the run.
func (o *goFSPollOps) Disarm() {
	(*goFSPoll)(o).halt()
	o.dropRef()
}

// Free stops the run (Disarm did if the poll was started) and frees the
// timer.
func (o *goFSPollOps) Free(bool) {
	o.dropRef()
	e := (*goFSPoll)(o)
	e.halt()
	e.timer.Close()
	e.forget()
	kind.HostOf(e.r.Owner()).CountHandle(e.kindName(), -1)
}

func (o *goFSPollOps) Owner() event.Owner { return o.r.Owner() }
func (o *goFSPollOps) Event() event.Event { return (*goFSPoll)(o) }
func (o *goFSPollOps) Describe() string   { return o.describe() }
