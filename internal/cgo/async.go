package uvcgo

/*
#include "uvev.h"
*/
import "C"

// NewAsync creates a uv_async_t reporting CompletionAsync records for id.
func (l *Loop) NewAsync(id uint64) (Handle, error) {
	var h C.uintptr_t
	if rc := C.uvev_async_new(l.mut(), C.uint64_t(id), &h); rc != 0 {
		return 0, errorOf("uv_async_init", int(rc))
	}
	return Handle(h), nil
}

// AsyncSend wakes the loop and makes the async handle report. Safe from any
// goroutine while the handle is open.
func (l *Loop) AsyncSend(h Handle) error {
	l.crossings.Add(1)
	if rc := C.uvev_async_send(C.uintptr_t(h)); rc != 0 {
		return errorOf("uv_async_send", int(rc))
	}
	return nil
}
