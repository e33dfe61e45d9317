package uvcgo

/*
#include "poll.h"
*/
import "C"

// NewPoll creates a uv_poll_t on fd reporting CompletionPoll records for id
// (N: the events that fired; Status: UV_EBADF when epoll reported an error
// on the descriptor, after which libuv has stopped the handle). A
// descriptor that is not open is refused with EBADF. libuv makes fd
// non-blocking.
func (l *Loop) NewPoll(id uint64, fd int) (Handle, error) {
	var h C.uintptr_t
	if rc := C.uvev_poll_new(l.mut(), C.uint64_t(id), C.int(fd), &h); rc != 0 {
		return 0, errorOf("uv_poll_init", int(rc))
	}
	return Handle(h), nil
}

// StartPoll starts h for events, or changes the events of a started h.
func (l *Loop) StartPoll(h Handle, events int) error {
	return errorOf("uv_poll_start", int(C.uvev_poll_start(l.mut(), C.uintptr_t(h), C.int(events))))
}

// StopPoll stops h.
func (l *Loop) StopPoll(h Handle) error {
	l.mut()
	return errorOf("uv_poll_stop", int(C.uvev_poll_stop(C.uintptr_t(h))))
}
