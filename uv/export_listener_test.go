package uv

import (
	"errors"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// Listener: accept failures and their pauses.

// UvtAcceptPause returns the pause that the failed accept err reported
// began (0: err is no such error).
func UvtAcceptPause(err error) time.Duration {
	var p *pausedError
	if errors.As(err, &p) {
		return p.pause
	}
	return 0
}

// UvtAcceptCounts returns the connections l accepted and the accepts
// that failed.
func UvtAcceptCounts(l *Listener) (accepted, failed uint64) {
	return l.e.accepted.Load(), l.e.failed.Load()
}

// UvtFailAccepts makes the next n accept(2) calls of the pure-Go driver's
// listeners fail with errno, until the test ends. Tests that call it must
// not run in parallel.
func UvtFailAccepts(t testing.TB, errno syscall.Errno, n int32) {
	var left atomic.Int32
	left.Store(n)
	old := acceptSocket
	acceptSocket = func(fd int, nonblock bool) (int, error) {
		if left.Add(-1) >= 0 {
			return -1, errno
		}
		return old(fd, nonblock)
	}
	t.Cleanup(func() { acceptSocket = old })
}
