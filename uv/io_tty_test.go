package uv_test

import (
	"errors"
	"io"
	"os"
	"regexp"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// TestTTY: a terminal as an IO: its window size, its mode, and bytes both
// ways through the pseudo-terminal.
func TestTTY(t *testing.T) {
	uv.UvtEachDriver(t, testTTY)
}

func testTTY(t *testing.T, u *uv.UvtReactor) {
	ptm, pts := openPTY(t)
	uv.UvtMust(t, unix.IoctlSetWinsize(int(ptm.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 24, Col: 80}))
	stop := uv.UvtServe(t, u)
	tty, err := uv.OpenTTY(u.Reactor, int(pts.Fd()))
	uv.UvtMust(t, err)
	if w, h, err := tty.WindowSize(); w != 80 || h != 24 || err != nil {
		t.Errorf("WindowSize = %dx%d, %v; want 80x24", w, h, err)
	}
	uv.UvtMust(t, tty.SetMode(uv.TTYRaw))
	tio, err := ptyTermios(int(pts.Fd()))
	uv.UvtMust(t, err)
	if tio.Lflag&(unix.ICANON|unix.ECHO) != 0 {
		t.Errorf("raw mode left ICANON or ECHO set: lflag %#x", tio.Lflag)
	}
	// Raw: a key arrives as it is typed, without a newline.
	if _, err := ptm.Write([]byte("k")); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 1)
	if _, err := io.ReadFull(tty, b); err != nil || b[0] != 'k' {
		t.Errorf("Read on the terminal = %q, %v; want k", b, err)
	}
	if _, err := tty.Write([]byte("out")); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 3)
	if _, err := io.ReadFull(ptm, got); err != nil || string(got) != "out" {
		t.Errorf("the terminal's output = %q, %v", got, err)
	}
	uv.UvtMust(t, uv.ResetTTYMode())
	tio, _ = ptyTermios(int(pts.Fd()))
	if tio.Lflag&unix.ICANON == 0 {
		t.Error("ResetTTYMode did not restore canonical mode")
	}
	uv.UvtMust(t, tty.Close())
	stop()
	uv.UvtShutdown(t, u, false)
}

func TestTTYBadInput(t *testing.T) {
	uv.UvtEachDriver(t, testTTYBadInput)
}

func testTTYBadInput(t *testing.T, u *uv.UvtReactor) {
	r, w, err := os.Pipe()
	uv.UvtMust(t, err)
	defer r.Close()
	defer w.Close()
	if _, err := uv.OpenTTY(u.Reactor, int(r.Fd())); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("OpenTTY on a pipe = %v, want EINVAL", err)
	}
	a, b, err := uv.Pipe(u.Reactor)
	uv.UvtMust(t, err)
	if err := a.SetMode(uv.TTYRaw); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("SetMode on a pipe IO = %v, want EINVAL", err)
	}
	if _, _, err := a.WindowSize(); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("WindowSize on a pipe IO = %v, want EINVAL", err)
	}
	a.Close()
	b.Close()
	uv.UvtShutdown(t, u, false)
}

// conformTTY runs a terminal IO through the table; typing on the
// pseudo-terminal makes it notify.
func conformTTY(t *testing.T) conform.Kind {
	ptm, pts := openPTY(t)
	return conform.Kind{
		Name: "io",
		New: func(r *reactor.Reactor) (event.Event, error) {
			return uv.OpenTTY(r, int(pts.Fd()))
		},
		Fire: func(event.Event) error {
			_, err := ptm.Write([]byte("x\n"))
			return err
		},
		Detach: func(event.Event) func() error {
			return func() error {
				_, err := ptm.Write([]byte("x\n"))
				return err
			}
		},
		Info: regexp.MustCompile(`^IO\(tty, in=\d+, out=\d+\)$`),
	}
}
