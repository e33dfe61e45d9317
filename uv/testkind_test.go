package uv

// Two kinds that exist for the tests of the loop contract and the kit: a
// libuv timer (libuv's clock and timeout, a handle) and a thread-pool job
// (a request in flight). Built with the kit like any real kind.

import (
	"fmt"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/eventkind"
	uvcgo "github.com/uvevent/uvevent/internal/cgo"
	"github.com/uvevent/uvevent/reactor"
)

// UvtLibuvTimer is a uv_timer_t as an event: its result is uv_now at the
// firing (ms).
type UvtLibuvTimer struct {
	handle
	e *uvtTimerEvent
}

type uvtTimerEvent struct {
	core
	timeout time.Duration
}

// UvtNewLibuvTimer creates a libuv-side one-shot timer.
func UvtNewLibuvTimer(r *reactor.Reactor, timeout time.Duration) (*UvtLibuvTimer, error) {
	e := &uvtTimerEvent{timeout: timeout}
	if err := newCore(r, &e.core, e, 0, func(l *uvcgo.Loop, id uint64) (uvcgo.Handle, error) {
		return l.NewTestTimer(id)
	}); err != nil {
		return nil, err
	}
	t := &UvtLibuvTimer{e: e}
	track(t, &t.handle, &e.core)
	return t, nil
}

func (e *uvtTimerEvent) kindName() string { return "libuv-timer" }
func (e *uvtTimerEvent) closing()         {}
func (e *uvtTimerEvent) describe() string { return fmt.Sprintf("LibuvTimer(timeout=%v)", e.timeout) }
func (e *uvtTimerEvent) arm() error {
	return e.loop.StartTestTimer(e.h, uint64(e.timeout/time.Millisecond), 0)
}
func (e *uvtTimerEvent) disarm() {
	if e.h != 0 {
		e.loop.StopTestTimer(e.h)
	}
}
func (e *uvtTimerEvent) completed(rec *uvcgo.Completion) {
	eventkind.Notify(&e.Base, rec.N, nil)
}

// UvtWork is a thread-pool job that sleeps, as a request event.
type UvtWork struct {
	event.Base
	reqCore
}

// UvtSubmitWork queues a job sleeping d on libuv's thread pool.
func UvtSubmitWork(r *reactor.Reactor, d time.Duration) (*UvtWork, error) {
	w := &UvtWork{}
	if err := submitReq(r, &w.Base, &w.reqCore, w, func(l *uvcgo.Loop, id uint64) (uvcgo.Request, error) {
		return l.SubmitTestWork(id, int(d/time.Microsecond))
	}); err != nil {
		return nil, err
	}
	return w, nil
}

func (w *UvtWork) kindName() string { return "work" }
func (w *UvtWork) describe() string { return "Work()" }
func (w *UvtWork) done(rec *uvcgo.Completion) (any, error) {
	if rec.Status != 0 {
		return nil, uvcgo.ErrorOf("uv_queue_work", int(rec.Status))
	}
	return "done", nil
}
func (w *UvtWork) cancel(req uvcgo.Request) { w.loop.CancelTestWork(req) }
