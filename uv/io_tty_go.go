package uv

import (
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/reactor"
)

// This file is the terminal on the pure-Go driver: a goStream over a
// descriptor of its own for the terminal, whose modes are set with termios
// the way libuv sets them (uv_tty_set_mode's flags).

// goTerm is a terminal IO's mode on the pure-Go driver; loop-owned.
type goTerm struct {
	mode TTYMode
	orig unix.Termios // the settings before the first change away from TTYNormal
}

// openGoTTY is OpenTTY on the pure-Go driver. As libuv does, it reopens
// the terminal (through its path) so that making the IO's descriptor
// non-blocking leaves the caller's file description as it was; where it
// cannot, it works on a duplicate of fd.
func openGoTTY(r *reactor.Reactor, fd int) (*IO, error) {
	if !isTerminal(fd) {
		return nil, fmt.Errorf("uv: OpenTTY(%d): not a terminal: %w", fd, errInvalid)
	}
	own, err := reopenTTY(fd)
	if err != nil {
		return nil, err
	}
	c := &IO{}
	if x := r.Call(func() {
		var g *goStream
		if g, err = newGoStream(r, own, "tty", false); err == nil {
			g.term = &goTerm{}
			g.link(c)
		}
	}); x != nil {
		err = x
	}
	if err != nil {
		unix.Close(own)
		return nil, err
	}
	return c, nil
}

// reopenTTY opens the terminal fd stands for anew, or duplicates fd.
func reopenTTY(fd int) (int, error) {
	if path, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", fd)); err == nil && strings.HasPrefix(path, "/dev/") {
		own, err := unix.Open(path, unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
		if err == nil && isTerminal(own) {
			return own, nil
		}
		if err == nil {
			unix.Close(own)
		}
	}
	own, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	return own, errnoError("fcntl F_DUPFD_CLOEXEC", err)
}

// setTTYMode sets the terminal's mode with the flags libuv uses: raw turns
// off input processing, echo, canonical input and signals (output keeps
// its newline translation); io is cfmakeraw's fully raw mode; normal puts
// back what the terminal had before the first change.
func (g *goStream) setTTYMode(m TTYMode) error {
	t := g.term
	if m == t.mode {
		return nil
	}
	if t.mode == TTYNormal {
		cur, err := getTermios(g.fd)
		if err != nil {
			return os.NewSyscallError("tcgetattr", err)
		}
		t.orig = *cur
		saveTTY(g.fd, cur)
	}
	tio := t.orig
	switch m {
	case TTYNormal:
	case TTYRaw:
		tio.Iflag &^= unix.BRKINT | unix.ICRNL | unix.INPCK | unix.ISTRIP | unix.IXON
		tio.Oflag |= unix.ONLCR
		tio.Cflag |= unix.CS8
		tio.Lflag &^= unix.ECHO | unix.ICANON | unix.IEXTEN | unix.ISIG
		tio.Cc[unix.VMIN], tio.Cc[unix.VTIME] = 1, 0
	case TTYIO:
		tio.Iflag &^= unix.IGNBRK | unix.BRKINT | unix.PARMRK | unix.ISTRIP | unix.INLCR | unix.IGNCR | unix.ICRNL | unix.IXON
		tio.Oflag &^= unix.OPOST
		tio.Lflag &^= unix.ECHO | unix.ECHONL | unix.ICANON | unix.ISIG | unix.IEXTEN
		tio.Cflag &^= unix.CSIZE | unix.PARENB
		tio.Cflag |= unix.CS8
		tio.Cc[unix.VMIN], tio.Cc[unix.VTIME] = 1, 0
	default:
		return fmt.Errorf("uv: SetMode(%d): %w", m, errInvalid)
	}
	// TCSETSW is tcsetattr's TCSADRAIN: output written so far goes out
	// in the old mode.
	if err := setTermiosDrain(g.fd, &tio); err != nil {
		return os.NewSyscallError("tcsetattr", err)
	}
	t.mode = m
	return nil
}

func (g *goStream) ttyWinSize() (width, height int, err error) {
	ws, err := unix.IoctlGetWinsize(g.fd, unix.TIOCGWINSZ)
	if err != nil {
		return 0, 0, os.NewSyscallError("ioctl TIOCGWINSZ", err)
	}
	return int(ws.Col), int(ws.Row), nil
}
