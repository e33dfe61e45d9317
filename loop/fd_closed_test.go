package loop_test

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A descriptor closed behind OnReadable, then OnWritable on it: the caller
// gets EBADF and the loop keeps running, on both drivers (libuv itself
// aborts the process when epoll refuses the descriptor).
func TestOnWritableAfterDescriptorClosed(t *testing.T) {
	eachDriver(t, func(t *testing.T, l *tloop) {
		fds, err := unixSocketpair()
		must(t, err)
		defer unix.Close(fds[1])
		must(t, l.OnReadable(fds[0], func(int) {}))
		must(t, l.Reactor().RunNoWait(context.Background()))
		unix.Close(fds[0])
		if err := l.OnWritable(fds[0], func(int) {}); !errors.Is(err, syscall.EBADF) {
			t.Errorf("OnWritable over a closed descriptor = %v, want EBADF", err)
		}
		ran := false
		_, err = l.Delay(time.Millisecond, func() { ran = true })
		must(t, err)
		ctx, cancel := context.WithTimeout(context.Background(), safety)
		defer cancel()
		for !ran {
			must(t, l.Reactor().RunOnce(ctx))
		}
		l.OffReadable(fds[0])
	})
}
