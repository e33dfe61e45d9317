package uvcgo

/*
#include "stream.h"
*/
import "C"

// NewIPC creates a uv_pipe_t made for passing handles (uv_pipe_init with
// ipc = 1), reporting for id; OpenPipe gives it its descriptor.
func (l *Loop) NewIPC(id uint64) (Handle, error) {
	var h C.uintptr_t
	if rc := C.uvev_ipc_new(l.mut(), C.uint64_t(id), &h); rc != 0 {
		return 0, errorOf("uv_pipe_init", int(rc))
	}
	return Handle(h), nil
}

// IPCSend passes fd over the IPC pipe h (uv_write2) with tag, the one byte
// that carries it. The shim owns fd from the call on, and closes it
// whatever happens. A CompletionWrite record with h's id and N = 1
// reports the end, in order with h's other writes.
func (l *Loop) IPCSend(h Handle, fd int, tag byte) error {
	return errorOf("uv_write2", int(C.uvev_ipc_send(l.mut(), C.uintptr_t(h), C.int(fd), C.int(tag))))
}

// IPCReadStart starts reading the IPC pipe h: each handle that comes in is
// a CompletionHandle record (N its libuv type, Aux its tag, the payload the
// accepted handle, closed after the turn unless taken; or Status an
// error), the end of the stream a CompletionRead record with Status EOF or
// an error. ReadStop stops it.
func (l *Loop) IPCReadStart(h Handle) error {
	l.mut()
	return errorOf("uv_read_start", int(C.uvev_ipc_read_start(C.uintptr_t(h))))
}
