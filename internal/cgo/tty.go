package uvcgo

/*
#include "stream.h"
*/
import "C"

// NewTTY creates a uv_tty_t over the terminal fd, reporting for id. fd
// stays the caller's to close.
func (l *Loop) NewTTY(id uint64, fd int) (Handle, error) {
	var h C.uintptr_t
	if rc := C.uvev_tty_new(l.mut(), C.uint64_t(id), C.int(fd), &h); rc != 0 {
		return 0, errorOf("uv_tty_init", int(rc))
	}
	return Handle(h), nil
}

// SetTTYMode sets the terminal's mode.
func (l *Loop) SetTTYMode(h Handle, mode int) error {
	l.crossings.Add(1)
	return errorOf("uv_tty_set_mode", int(C.uvev_tty_set_mode(C.uintptr_t(h), C.int(mode))))
}

// TTYWinSize returns the terminal's window size in columns and rows.
func (l *Loop) TTYWinSize(h Handle) (width, height int, err error) {
	var w, ht C.int
	l.crossings.Add(1)
	if rc := C.uvev_tty_winsize(C.uintptr_t(h), &w, &ht); rc != 0 {
		return 0, 0, errorOf("uv_tty_get_winsize", int(rc))
	}
	return int(w), int(ht), nil
}
