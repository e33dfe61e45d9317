package uv

import (
	"fmt"

	"golang.org/x/sys/unix"

	uvcgo "github.com/uvevent/uvevent/cgo"
	"github.com/uvevent/uvevent/reactor"
)

// This file holds the TTY transport (uv_tty_t): a terminal as an IO, with
// its mode and window size.

// TTYMode is a terminal mode.
type TTYMode int

// The terminal modes libuv knows.
const (
	TTYNormal TTYMode = uvcgo.TTYModeNormal // line editing and echo, as the terminal was
	TTYRaw    TTYMode = uvcgo.TTYModeRaw    // every key as it comes, no echo, no signals
	TTYIO     TTYMode = uvcgo.TTYModeIO     // binary-safe I/O (for an IPC peer on a tty)
)

// OpenTTY makes an IO of the terminal fd (os.Stdin.Fd(), a pty's end).
// libuv reopens the terminal where it can, so the descriptor other code
// shares stays as it was; fd remains the caller's to close, after the IO.
// A descriptor that is not a terminal is refused (EINVAL or ENOTTY).
func OpenTTY(r *reactor.Reactor, fd int) (*IO, error) {
	s := newUVStream(r, "tty")
	if err := newCore(r, &s.core, s, 0, func(l *uvcgo.Loop, id uint64) (uvcgo.Handle, error) {
		if !isTerminal(fd) {
			return 0, fmt.Errorf("uv: OpenTTY(%d): not a terminal: %w", fd, errInvalid)
		}
		return l.NewTTY(id, fd)
	}); err != nil {
		return nil, err
	}
	return newIO(s), nil
}

// SetMode sets the terminal's mode. ResetTTYMode restores the mode the
// first SetMode of the process found (call it before exiting from raw mode).
func (c *IO) SetMode(m TTYMode) error {
	e := c.e
	return e.do(func() error {
		if e.transport != "tty" {
			return fmt.Errorf("uv: SetMode on a %s IO: %w", e.transport, errInvalid)
		}
		s := e.t.(*uvStream) // only the libuv driver makes terminals
		return s.loop.SetTTYMode(s.h, int(m))
	})
}

// WindowSize returns the terminal's size in columns and rows.
func (c *IO) WindowSize() (width, height int, err error) {
	e := c.e
	err = e.do(func() error {
		if e.transport != "tty" {
			return fmt.Errorf("uv: WindowSize on a %s IO: %w", e.transport, errInvalid)
		}
		s := e.t.(*uvStream)
		width, height, err = s.loop.TTYWinSize(s.h)
		return err
	})
	return width, height, err
}

// ResetTTYMode restores the terminal mode the process's first SetMode
// found. Safe from any goroutine, also from a signal handler's goroutine.
func ResetTTYMode() error { return uvcgo.ResetTTYMode() }

// isTerminal reports whether fd is a terminal.
func isTerminal(fd int) bool {
	_, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	return err == nil
}
