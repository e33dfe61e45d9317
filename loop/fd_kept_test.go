package loop_test

import (
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// A watch of OnReadable is its loop's: the uv.Poll and uv.PollProxy under
// it, which the program never sees, survive collections and still deliver.
func TestOnReadableKeptAfterGC(t *testing.T) {
	eachDriver(t, func(t *testing.T, l *tloop) {
		fds := socketpair(t)
		calls := 0
		must(t, l.OnReadable(fds[0], func(fd int) {
			calls++
			var b [8]byte
			unix.Read(fd, b[:])
			l.OffReadable(fd)
		}))
		for range 3 {
			runtime.GC()
		}
		if _, err := unix.Write(fds[1], []byte("x")); err != nil {
			t.Fatal(err)
		}
		run(t, l)
		if calls != 1 {
			t.Errorf("the readable callback ran %d times after GC, want 1", calls)
		}
	})
}
