package loop_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/loop"
	"github.com/uvevent/uvevent/reactor"
)

// safety bounds every wait of these tests. It never decides a test: a test
// that reaches it has hung, and fails instead of hanging.
const safety = 30 * time.Second

// drivers is the table every test of the interface runs through.
var drivers = []reactor.Driver{reactor.DriverLibuv, reactor.DriverGo}

// tloop is a loop under test with the reports its reactor made.
type tloop struct {
	*loop.Loop
	mu      sync.Mutex
	reports []string
}

func (tl *tloop) Reports() []string {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	return append([]string(nil), tl.reports...)
}

// eachDriver runs fn once per driver, on a fresh loop, and ends with the
// libuv habit: the loop closes cleanly, nothing is left (no C handle, no
// active event, no watcher goroutine) and nothing was reported. A driver
// this build lacks is skipped with the reason.
func eachDriver(t *testing.T, fn func(t *testing.T, l *tloop)) {
	for _, d := range drivers {
		t.Run(d.String(), func(t *testing.T) {
			tl := newLoop(t, d)
			fn(t, tl)
			finish(t, tl)
		})
	}
}

func newLoop(t *testing.T, d reactor.Driver) *tloop {
	t.Helper()
	tl := &tloop{}
	l, err := loop.New(loop.Options{ReactorOptions: reactor.Options{Driver: d,
		OnReport: func(ev event.Event, msg string, err error) {
			tl.mu.Lock()
			tl.reports = append(tl.reports, fmt.Sprintf("%s: %v", msg, err))
			tl.mu.Unlock()
		}}})
	if errors.Is(err, reactor.ErrNoLibuv) {
		t.Skipf("the %v driver is not in this build (built without cgo): %v", d, err)
	}
	if err != nil {
		t.Fatalf("loop.New(%v): %v", d, err)
	}
	if got := l.Driver(); got != d {
		t.Fatalf("Driver() = %v, want %v", got, d)
	}
	tl.Loop = l
	t.Cleanup(func() { l.Close() })
	return tl
}

func finish(t *testing.T, tl *tloop) {
	t.Helper()
	if err := tl.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := tl.Close(); err != nil {
		t.Errorf("second Close = %v, want nil", err)
	}
	s := tl.Reactor().Stats()
	if s.CHandles != 0 || len(s.Handles) != 0 || s.Active != 0 || s.Timers != 0 {
		t.Errorf("after Close: CHandles=%d Handles=%v Active=%d Timers=%d, want all 0",
			s.CHandles, s.Handles, s.Active, s.Timers)
	}
	if n := tl.TimerCount(); n != 0 {
		t.Errorf("TimerCount after Close = %d, want 0", n)
	}
	noPollerGoroutine(t)
	if r := tl.Reports(); len(r) > 0 {
		t.Errorf("unexpected reports: %q", r)
	}
}

// noPollerGoroutine checks that no goroutine of the pure-Go driver's
// pollers (package uv) is left in the process. A poller waits for its
// goroutine when it closes, but the goroutine's frames can show in a stack
// dump for a moment after; the safety bound only stops a hang.
func noPollerGoroutine(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(safety)
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if !bytes.Contains(buf[:n], []byte("uv.(*goPoller).run(")) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("a poller goroutine is left:\n%s", buf[:n])
		}
		runtime.Gosched()
	}
}

// run drives the loop until it has nothing left, Stop, or the safety bound.
func run(t *testing.T, l *tloop) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), safety)
	defer cancel()
	if err := l.Run(ctx); err != nil {
		t.Fatalf("Run: %v", err)
	}
}

// socketpair returns a connected pair of stream sockets, closed at the
// test's end.
func socketpair(t *testing.T) [2]int {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fds[0]); unix.Close(fds[1]) })
	return fds
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// unixSocketpair returns a connected pair of stream sockets.
func unixSocketpair() ([2]int, error) {
	return unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
}
