package uv_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// openatNumbers is openat(2)'s system call number by architecture, as
// /proc/<pid>/task/<tid>/syscall shows it.
var openatNumbers = map[string]string{"amd64": "257", "arm64": "56", "riscv64": "56", "386": "295"}

// threadsInFIFOOpen counts this process's threads blocked opening a FIFO:
// the kernel's wait channel says wait_for_partner, or the thread is in
// openat (nothing else in a test process opens for long).
func threadsInFIFOOpen(t testing.TB) int {
	t.Helper()
	tasks, err := filepath.Glob("/proc/self/task/*")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, task := range tasks {
		wchan, _ := os.ReadFile(task + "/wchan")
		sc, _ := os.ReadFile(task + "/syscall")
		nr, _, _ := strings.Cut(string(sc), " ")
		if string(wchan) == "wait_for_partner" || nr != "" && nr == openatNumbers[runtime.GOARCH] {
			n++
		}
	}
	return n
}

// Shutdown honours its context on both drivers while a file request is
// stuck on the pool (an open of a FIFO nobody writes to): it returns the
// context's error while the open still blocks — before the blocker ends,
// whatever the time — says what is still running, and the reactor is
// closed all the same. Once the blocker ends, a second Close waits for the
// rest and nothing is left.
func TestShutdownContextBoundsPoolRequest(t *testing.T) {
	if _, ok := openatNumbers[runtime.GOARCH]; !ok {
		t.Skipf("no openat number known for %s: cannot tell when the open blocks", runtime.GOARCH)
	}
	eachDriverCounted(t, func(t *testing.T, u *uv.UvtReactor, base, fds int) {
		fifo := filepath.Join(t.TempDir(), "fifo")
		uv.UvtMust(t, unix.Mkfifo(fifo, 0o600))
		before := threadsInFIFOOpen(t)
		q, err := uv.UvtFSOpen(u.Reactor, fifo, unix.O_RDONLY)
		uv.UvtMust(t, err)
		uv.UvtWaitFor(t, "the open to block on the pool", func() bool { return threadsInFIFOOpen(t) > before })
		info := q.Info()
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // the bound: nothing may be waited for
		err = u.Shutdown(ctx)
		blocked := threadsInFIFOOpen(t) > before // the blocker has not ended
		if !blocked {
			t.Fatal("the open ended by itself")
		}
		switch {
		case u.Driver() == reactor.DriverLibuv:
			// libuv cannot take back a running request: Close would wait.
			if !errors.Is(err, context.Canceled) || !errors.Is(err, reactor.ErrCloseIncomplete) {
				t.Errorf("Shutdown = %v, want context.Canceled and ErrCloseIncomplete", err)
			} else if !strings.Contains(err.Error(), info) {
				t.Errorf("Shutdown = %q, want it to name %s", err, info)
			}
		case err != nil: // the pure-Go driver does not wait for its workers
			t.Errorf("Shutdown = %v, want nil on the pure-Go driver", err)
		}
		if _, err := uv.UvtFSOpen(u.Reactor, fifo, unix.O_RDONLY); !errors.Is(err, reactor.ErrReactorClosed) {
			t.Errorf("a request after Shutdown = %v, want ErrReactorClosed", err)
		}
		w, err := unix.Open(fifo, unix.O_RDWR|unix.O_CLOEXEC, 0) // ends the blocker
		uv.UvtMust(t, err)
		defer unix.Close(w)
		uv.UvtShutdown(t, u, false) // waits for the rest; nothing is left
		unix.Close(w)
		uv.UvtNoLeaks(t, base, fds)
	})
}
