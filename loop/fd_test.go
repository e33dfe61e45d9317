package loop_test

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/reactor"
)

// A readable callback that reads one byte at a time is called again while
// bytes remain (level-triggered, on both drivers); OffReadable from it ends
// the watch, and Run with it.
func TestOnReadableLevel(t *testing.T) {
	eachDriver(t, func(t *testing.T, l *tloop) {
		fds := socketpair(t)
		var got []string
		var offs []bool
		must(t, l.OnReadable(fds[0], func(fd int) {
			b := make([]byte, 1)
			n, err := unix.Read(fd, b)
			if err != nil || n != 1 {
				t.Errorf("read: n=%d err=%v", n, err)
				offs = append(offs, l.OffReadable(fd))
				return
			}
			got = append(got, string(b))
			if b[0] == '!' {
				offs = append(offs, l.OffReadable(fd), l.OffReadable(fd))
			}
		}))
		if _, err := unix.Write(fds[1], []byte("abc!")); err != nil {
			t.Fatal(err)
		}
		run(t, l)
		if diff := cmp.Diff([]string{"a", "b", "c", "!"}, got); diff != "" {
			t.Errorf("reads (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]bool{true, false}, offs); diff != "" {
			t.Errorf("OffReadable results (-want +got):\n%s", diff)
		}
	})
}

// Both directions on one descriptor: each callback hears its own
// readiness; a second OnReadable replaces the first callback.
func TestOnReadableAndWritable(t *testing.T) {
	eachDriver(t, func(t *testing.T, l *tloop) {
		fds := socketpair(t)
		var got []string
		var s reactor.Stats
		// Registered and counted in one operation on the loop: on the
		// pure-Go driver, readiness queued meanwhile would otherwise run
		// the writable callback before the count is read.
		must(t, l.Reactor().Call(func() {
			errs := []error{
				l.OnReadable(fds[0], func(int) { t.Error("replaced callback called") }),
				l.OnReadable(fds[0], func(fd int) {
					b := make([]byte, 16)
					n, _ := unix.Read(fd, b)
					got = append(got, "read "+string(b[:n]))
					l.OffReadable(fd)
				}),
				l.OnWritable(fds[0], func(fd int) {
					unix.Write(fd, []byte("out"))
					got = append(got, "wrote")
					if !l.OffWritable(fd) {
						t.Error("OffWritable from its callback = false")
					}
				}),
			}
			for _, err := range errs {
				if err != nil {
					t.Error(err)
				}
			}
			s = l.Reactor().Stats()
		}))
		// One source per descriptor: a uv.Poll shared by a proxy per
		// direction, all three started.
		if s.Active != 3 {
			t.Errorf("active events for one descriptor watched both ways = %d, want 3 (a poll, two proxies)", s.Active)
		}
		if l.Driver() == reactor.DriverLibuv {
			if n := s.Handles["poll"]; n != 1 {
				t.Errorf("libuv polls for one descriptor watched both ways = %d, want 1", n)
			}
			if s.Crossings == 0 {
				t.Error("Stats().Crossings = 0 after a poll was made through the shim")
			}
		}
		if l.OffWritable(fds[1]) {
			t.Error("OffWritable of a descriptor never watched = true")
		}
		unix.Write(fds[1], []byte("in"))
		run(t, l)
		if len(got) != 2 || !contains(got, "read in") || !contains(got, "wrote") {
			t.Errorf("calls = %q, want one read of \"in\" and one write", got)
		}
		b := make([]byte, 16)
		n, _ := unix.Read(fds[1], b)
		if string(b[:n]) != "out" {
			t.Errorf("peer read %q, want \"out\"", b[:n])
		}
	})
}

func contains(s []string, x string) bool {
	for _, y := range s {
		if y == x {
			return true
		}
	}
	return false
}

// Bad descriptors and callbacks are refused; the loop keeps working.
func TestFDBadInput(t *testing.T) {
	eachDriver(t, func(t *testing.T, l *tloop) {
		fds := socketpair(t)
		closed, err := unix.Dup(fds[0])
		must(t, err)
		unix.Close(closed)
		if err := l.OnReadable(-1, func(int) {}); !errors.Is(err, syscall.EBADF) {
			t.Errorf("OnReadable(-1) = %v, want EBADF", err)
		}
		if err := l.OnWritable(closed, func(int) {}); !errors.Is(err, syscall.EBADF) {
			t.Errorf("OnWritable(closed fd) = %v, want EBADF", err)
		}
		if err := l.OnReadable(fds[0], nil); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("OnReadable(nil) = %v, want EINVAL", err)
		}
		f, err := os.Create(filepath.Join(t.TempDir(), "regular"))
		must(t, err)
		defer f.Close()
		if err := l.OnReadable(int(f.Fd()), func(int) {}); err == nil {
			t.Error("OnReadable(regular file) = nil, want an error")
		}
		if l.OffReadable(int(f.Fd())) || l.OffReadable(fds[0]) {
			t.Error("OffReadable after refusals = true, want false")
		}
		called := false
		must(t, l.OnWritable(fds[0], func(fd int) { called = true; l.OffWritable(fd) }))
		run(t, l)
		if !called {
			t.Error("a watch after bad input was not called")
		}
	})
}

// Watches left in place are removed by the loop's Close (the test's end
// checks that nothing is left, watcher goroutines included).
func TestFDCloseWithWatches(t *testing.T) {
	eachDriver(t, func(t *testing.T, l *tloop) {
		fds := socketpair(t)
		must(t, l.OnReadable(fds[0], func(int) {}))
		must(t, l.OnWritable(fds[0], func(fd int) { l.Stop() }))
		must(t, l.OnReadable(fds[1], func(int) {}))
		run(t, l) // until the writable callback's Stop
	})
}
