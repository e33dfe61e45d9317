package uvcgo

/*
#include "uvev.h"
*/
import "C"

// The test kinds (testkind.c): a libuv timer and a thread-pool request,
// which the kernel's tests use to prove the loop contract through real libuv
// state. No user-facing kind is built on them.

// NewTestTimer creates a uv_timer_t reporting CompletionTimer records for
// id, with libuv's clock (uv_now) at the firing in N.
func (l *Loop) NewTestTimer(id uint64) (Handle, error) {
	var h C.uintptr_t
	if rc := C.uvev_testtimer_new(l.mut(), C.uint64_t(id), &h); rc != 0 {
		return 0, errorOf("uv_timer_init", int(rc))
	}
	return Handle(h), nil
}

// StartTestTimer starts h: due timeoutMS from now on libuv's refreshed clock.
func (l *Loop) StartTestTimer(h Handle, timeoutMS, repeatMS uint64) error {
	return errorOf("uv_timer_start", int(C.uvev_testtimer_start(l.mut(), C.uintptr_t(h), C.uint64_t(timeoutMS), C.uint64_t(repeatMS))))
}

// StopTestTimer stops h.
func (l *Loop) StopTestTimer(h Handle) error {
	l.mut()
	return errorOf("uv_timer_stop", int(C.uvev_testtimer_stop(C.uintptr_t(h))))
}

// SubmitTestWork queues a uv_work_t that sleeps sleepUS microseconds on
// libuv's thread pool and reports CompletionWork for id (status 0, or
// UV_ECANCELED when cancelled first). It counts in Requests until then.
func (l *Loop) SubmitTestWork(id uint64, sleepUS int) (Request, error) {
	var r C.uintptr_t
	if rc := C.uvev_testwork_submit(l.mut(), C.uint64_t(id), C.int(sleepUS), &r); rc != 0 {
		return 0, errorOf("uv_queue_work", int(rc))
	}
	return Request(r), nil
}

// CancelTestWork cancels a request that has not started (uv_cancel); EBUSY
// when it runs already. Call it only while the request is in flight.
func (l *Loop) CancelTestWork(r Request) error {
	l.mut()
	return errorOf("uv_cancel", int(C.uvev_testwork_cancel(C.uintptr_t(r))))
}
