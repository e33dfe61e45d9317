package uv

import (
	"fmt"
	"sync"

	"golang.org/x/sys/unix"

	uvcgo "github.com/uvevent/uvevent/internal/cgo"
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
// The terminal is reopened where it can be (as libuv does, on either
// driver), so the descriptor other code shares stays as it was; fd remains
// the caller's to close, after the IO.
// A descriptor that is not a terminal is refused (EINVAL or ENOTTY).
func OpenTTY(r *reactor.Reactor, fd int) (*IO, error) {
	if r != nil && r.Driver() == reactor.DriverGo {
		return openGoTTY(r, fd)
	}
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
	if c.zero() {
		return errZero("IO")
	}
	e := c.e
	return e.do(func() error {
		if e.transport != "tty" {
			return fmt.Errorf("uv: SetMode on a %s IO: %w", e.transport, errInvalid)
		}
		return e.t.(terminal).setTTYMode(m)
	})
}

// WindowSize returns the terminal's size in columns and rows.
func (c *IO) WindowSize() (width, height int, err error) {
	if c.zero() {
		return 0, 0, errZero("IO")
	}
	e := c.e
	err = e.do(func() error {
		if e.transport != "tty" {
			return fmt.Errorf("uv: WindowSize on a %s IO: %w", e.transport, errInvalid)
		}
		width, height, err = e.t.(terminal).ttyWinSize()
		return err
	})
	return width, height, err
}

// ResetTTYMode restores the settings the terminal had before the
// process's first SetMode away from TTYNormal, on either driver. It
// restores them while that terminal's IO is open: closing the IO forgets
// them (its descriptor goes, and its number may be reused), and the next
// SetMode saves anew; with none saved it does nothing. Safe from any
// goroutine, also from a signal handler's goroutine.
func ResetTTYMode() error {
	ttySaved.Lock()
	defer ttySaved.Unlock()
	if ttySaved.fd < 0 {
		return nil
	}
	return errnoError("tcsetattr", setTermiosDrain(ttySaved.fd, &ttySaved.orig))
}

// ttySaved is what ResetTTYMode restores: the settings the first mode
// change found, and the descriptor of the terminal IO that made it (-1:
// none saved). It is kept here rather than by libuv (uv_tty_reset_mode),
// whose record outlives the terminal's descriptor.
var ttySaved = struct {
	sync.Mutex
	fd   int
	orig unix.Termios
}{fd: -1}

// saveTTY saves orig, the settings of the terminal IO whose descriptor is
// fd, for ResetTTYMode, unless settings are saved already.
func saveTTY(fd int, orig *unix.Termios) {
	ttySaved.Lock()
	if ttySaved.fd < 0 {
		ttySaved.fd, ttySaved.orig = fd, *orig
	}
	ttySaved.Unlock()
}

// forgetTTY drops the saved settings when the terminal IO they belong to
// closes, before its descriptor goes.
func forgetTTY(fd int) {
	ttySaved.Lock()
	if ttySaved.fd == fd {
		ttySaved.fd = -1
	}
	ttySaved.Unlock()
}

// terminal is a terminal IO's transport, on either driver.
type terminal interface {
	setTTYMode(m TTYMode) error
	ttyWinSize() (width, height int, err error)
}

// isTerminal reports whether fd is a terminal.
func isTerminal(fd int) bool {
	_, err := getTermios(fd)
	return err == nil
}
