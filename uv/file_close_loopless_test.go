package uv_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/uv"
)

// closeSoon runs f.Close on another goroutine and returns its error, failing
// the test if it does not return before the safety deadline: a Close
// waiting for a loop that does not run.
func closeSoon(t *testing.T, f *uv.File) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f.Close() }()
	return uv.UvtRecv(t, done, "File.Close")
}

// fdsOn counts this process's descriptors open on the file at path.
func fdsOn(t *testing.T, path string) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	uv.UvtMust(t, err)
	n := 0
	for _, e := range ents {
		if target, _ := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); target == path {
			n++
		}
	}
	return n
}

// TestFileCloseAfterRun: a deferred Close after Run returned (no loop runs
// any more) closes the file at once, and a second Close says it is closed,
// as *os.File's does.
func TestFileCloseAfterRun(t *testing.T) {
	eachDriverCounted(t, func(t *testing.T, u *uv.UvtReactor, base, fds int) {
		name := filepath.Join(t.TempDir(), "f")
		q, err := uv.OpenAsync(context.Background(), u.Reactor, name, os.O_RDWR|os.O_CREATE, 0o600)
		uv.UvtMust(t, err)
		uv.UvtMust(t, u.Run(context.Background()))
		f, err := q.Await(context.Background())
		uv.UvtMust(t, err)
		if err := closeSoon(t, f); err != nil {
			t.Errorf("Close after Run returned = %v, want nil", err)
		}
		if err := closeSoon(t, f); !errors.Is(err, os.ErrClosed) {
			t.Errorf("second Close = %v, want os.ErrClosed", err)
		}
		if n := fdsOn(t, name); n != 0 {
			t.Errorf("%d descriptors open on the file after Close, want 0", n)
		}
		uv.UvtShutdown(t, u, false)
		uv.UvtNoLeaks(t, base, fds)
	})
}

// TestFileCloseLeftToRequest: a Close while no loop runs and a read of the
// file is still in flight returns at once, and leaves the descriptor open
// for the read, which reads what comes (not EBADF, nor another file's
// bytes); the descriptor is closed once the read is done, whether a Run
// completes it or the reactor's Close does.
func TestFileCloseLeftToRequest(t *testing.T) {
	for _, end := range []string{"run", "reactor close"} {
		t.Run(end, func(t *testing.T) {
			eachDriverCounted(t, func(t *testing.T, u *uv.UvtReactor, base, fds int) {
				fifo := filepath.Join(t.TempDir(), "fifo")
				uv.UvtMust(t, unix.Mkfifo(fifo, 0o600))
				stop := uv.UvtServe(t, u)
				f, err := uv.OpenFile(context.Background(), u.Reactor, fifo, os.O_RDWR, 0)
				uv.UvtMust(t, err)
				stop()
				read, err := f.ReadAsync(1, -1) // blocks its worker: nobody wrote yet
				uv.UvtMust(t, err)
				if err := closeSoon(t, f); err != nil {
					t.Errorf("Close with a read in flight = %v, want nil", err)
				}
				if err := closeSoon(t, f); !errors.Is(err, os.ErrClosed) {
					t.Errorf("second Close = %v, want os.ErrClosed", err)
				}
				if n := fdsOn(t, fifo); n != 1 {
					t.Errorf("%d descriptors open on the FIFO after Close, want the read's 1", n)
				}
				if _, err := f.ReadAsync(1, -1); !errors.Is(err, os.ErrClosed) {
					t.Errorf("ReadAsync after Close = %v, want os.ErrClosed", err)
				}
				w, err := unix.Open(fifo, unix.O_WRONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
				uv.UvtMust(t, err)
				_, err = unix.Write(w, []byte("x"))
				uv.UvtMust(t, err)
				unix.Close(w)
				if end == "run" {
					uv.UvtMust(t, u.Run(context.Background()))
					got, err := read.Await(context.Background())
					if string(got) != "x" || err != nil {
						t.Errorf("the read = %q, %v, want \"x\", nil", got, err)
					}
				} else {
					uv.UvtShutdown(t, u, false)
				}
				uv.UvtWaitFor(t, "the descriptor closed after the read", func() bool { return fdsOn(t, fifo) == 0 })
				uv.UvtShutdown(t, u, false)
				uv.UvtNoLeaks(t, base, fds)
			})
		})
	}
}
