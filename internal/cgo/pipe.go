package uvcgo

/*
#include <stdlib.h>
#include "stream.h"
*/
import "C"

import "unsafe"

// NewPipe creates a uv_pipe_t reporting for id.
func (l *Loop) NewPipe(id uint64) (Handle, error) {
	var h C.uintptr_t
	if rc := C.uvev_pipe_new(l.mut(), C.uint64_t(id), &h); rc != 0 {
		return 0, errorOf("uv_pipe_init", int(rc))
	}
	return Handle(h), nil
}

// OpenPipe makes h use fd (a socket or a pipe); h owns it from then on.
func (l *Loop) OpenPipe(h Handle, fd int) error {
	l.mut()
	return errorOf("uv_pipe_open", int(C.uvev_pipe_open(C.uintptr_t(h), C.int(fd))))
}

// ConnectPipe connects h to the socket path name; a CompletionConnect
// record with h's id reports the outcome, errors included.
func (l *Loop) ConnectPipe(h Handle, name string) error {
	cs := C.CString(name) // freed below: libuv copies the path into the address
	defer C.free(unsafe.Pointer(cs))
	return errorOf("uv_pipe_connect", int(C.uvev_pipe_connect(l.mut(), C.uintptr_t(h), cs)))
}

// PipeName returns h's socket name, or its peer's with peer set.
func (l *Loop) PipeName(h Handle, peer bool) (string, error) {
	var buf [256]C.char
	n := C.size_t(len(buf))
	pe := C.int(0)
	op := "uv_pipe_getsockname"
	if peer {
		pe, op = 1, "uv_pipe_getpeername"
	}
	l.crossings.Add(1)
	if rc := C.uvev_pipe_name(C.uintptr_t(h), pe, &buf[0], &n); rc != 0 {
		return "", errorOf(op, int(rc))
	}
	return C.GoStringN(&buf[0], C.int(n)), nil
}
