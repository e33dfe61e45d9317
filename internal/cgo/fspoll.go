package uvcgo

/*
#include "fspoll.h"
*/
import "C"

// NewFSPoll creates a uv_fs_poll_t reporting CompletionFSPoll records for
// id (Status: 0 or the stat's error; the payload: the previous and the
// current stat, see FSPollWords).
func (l *Loop) NewFSPoll(id uint64) (Handle, error) {
	var h C.uintptr_t
	if rc := C.uvev_fspoll_new(l.mut(), C.uint64_t(id), &h); rc != 0 {
		return 0, errorOf("uv_fs_poll_init", int(rc))
	}
	return Handle(h), nil
}

// StartFSPoll starts h polling path every intervalMS milliseconds.
func (l *Loop) StartFSPoll(h Handle, path string, intervalMS uint32) error {
	return errorOf("uv_fs_poll_start", int(C.uvev_fspoll_start(l.mut(), C.uintptr_t(h), cpath(path), C.uint(intervalMS))))
}

// StopFSPoll stops h.
func (l *Loop) StopFSPoll(h Handle) error {
	l.mut()
	return errorOf("uv_fs_poll_stop", int(C.uvev_fspoll_stop(C.uintptr_t(h))))
}
