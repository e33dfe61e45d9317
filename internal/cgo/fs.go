package uvcgo

/*
#include <stdlib.h>
#include "fs.h"
*/
import "C"

import "unsafe"

// File operations (fs.c) are uv_fs_t requests on libuv's thread pool. Each
// reports one CompletionFS record for its id: Status 0 or the error, N the
// result (a descriptor, a byte count), and for a read the bytes as its
// payload (Bytes).

// FSOpen opens path with the open(2) flags and mode; N is the descriptor.
func (l *Loop) FSOpen(id uint64, path string, flags, mode int) (Request, error) {
	cs := C.CString(path) // freed below: libuv copies the path
	defer C.free(unsafe.Pointer(cs))
	var r C.uintptr_t
	if rc := C.uvev_fs_open(l.mut(), C.uint64_t(id), cs, C.int(flags), C.int(mode), &r); rc != 0 {
		return 0, errorOf("uv_fs_open", int(rc))
	}
	return Request(r), nil
}

// FSRead reads up to n bytes of fd at off (-1: at the current position)
// into a C buffer the record carries.
func (l *Loop) FSRead(id uint64, fd, n int, off int64) (Request, error) {
	var r C.uintptr_t
	if rc := C.uvev_fs_read(l.mut(), C.uint64_t(id), C.int(fd), C.size_t(n), C.int64_t(off), &r); rc != 0 {
		return 0, errorOf("uv_fs_read", int(rc))
	}
	return Request(r), nil
}

// FSWrite writes p (copied into C memory the request owns) to fd at off
// (-1: at the current position).
func (l *Loop) FSWrite(id uint64, fd int, p []byte, off int64) (Request, error) {
	var r C.uintptr_t
	if rc := C.uvev_fs_write(l.mut(), C.uint64_t(id), C.int(fd), cbytes(p), C.size_t(len(p)), C.int64_t(off), &r); rc != 0 {
		return 0, errorOf("uv_fs_write", int(rc))
	}
	return Request(r), nil
}

// FSClose closes fd.
func (l *Loop) FSClose(id uint64, fd int) (Request, error) {
	var r C.uintptr_t
	if rc := C.uvev_fs_close(l.mut(), C.uint64_t(id), C.int(fd), &r); rc != 0 {
		return 0, errorOf("uv_fs_close", int(rc))
	}
	return Request(r), nil
}

// CancelFS cancels a request that has not started (uv_cancel); EBUSY when
// it runs already. Call it only while the request is in flight.
func (l *Loop) CancelFS(r Request) error {
	l.mut()
	return errorOf("uv_cancel", int(C.uvev_fs_cancel(C.uintptr_t(r))))
}
