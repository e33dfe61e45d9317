package uvcgo

/*
#include "fsevent.h"
*/
import "C"

import "unsafe"

// cpath returns path as NUL-terminated Go memory holding no pointers, for a
// C call that copies it.
func cpath(path string) *C.char {
	b := append([]byte(path), 0)
	return (*C.char)(unsafe.Pointer(&b[0]))
}

// NewFSEvent creates a uv_fs_event_t reporting CompletionFSEvent records
// for id (Aux: the events; the payload: the file name, see Bytes).
func (l *Loop) NewFSEvent(id uint64) (Handle, error) {
	var h C.uintptr_t
	if rc := C.uvev_fsevent_new(l.mut(), C.uint64_t(id), &h); rc != 0 {
		return 0, errorOf("uv_fs_event_init", int(rc))
	}
	return Handle(h), nil
}

// StartFSEvent starts watching path with h.
func (l *Loop) StartFSEvent(h Handle, path string) error {
	return errorOf("uv_fs_event_start", int(C.uvev_fsevent_start(l.mut(), C.uintptr_t(h), cpath(path))))
}

// StopFSEvent stops h.
func (l *Loop) StopFSEvent(h Handle) error {
	l.mut()
	return errorOf("uv_fs_event_stop", int(C.uvev_fsevent_stop(C.uintptr_t(h))))
}

// NewFSEventChild starts a child watch of the directory path, whose
// records carry id, FSEventChild in Aux, and the directory's path joined
// with the file name. It is freed by CloseFSEventChild's close callback and
// reports no CompletionClosed record.
func (l *Loop) NewFSEventChild(id uint64, path string) (Handle, error) {
	var h C.uintptr_t
	if rc := C.uvev_fsevent_child_new(l.mut(), C.uint64_t(id), cpath(path), &h); rc != 0 {
		return 0, errorOf("uv_fs_event_start", int(rc))
	}
	return Handle(h), nil
}

// CloseFSEventChild closes a child watch.
func (l *Loop) CloseFSEventChild(h Handle) {
	l.mut()
	C.uvev_fsevent_child_close(C.uintptr_t(h))
}
