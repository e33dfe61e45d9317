package uv

// The helpers every test of this directory shares, internal (package uv)
// and external (package uv_test): a reactor on each driver whose reports
// are recorded and whose leftovers are checked at cleanup, serving, waiting,
// and the leak checks of goroutines and descriptors. They live in package
// uv so that the external tests can use them as uv.UvtX; every name starts
// with Uvt so that it cannot clash with the package's own identifiers.
// What only reaches inside the package is in export_test.go.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/internal/kind"
	"github.com/uvevent/uvevent/reactor"
)

// UvtSafety bounds every wait of these tests. It never decides a test: a
// test that reaches it has hung, and fails instead of hanging.
const UvtSafety = 30 * time.Second

// UvtReport is one report a reactor made through Options.OnReport.
type UvtReport struct {
	Info string
	Msg  string
	Err  error
}

func (r UvtReport) String() string { return fmt.Sprintf("%s: %s: %v", r.Info, r.Msg, r.Err) }

// UvtReactor is a reactor under test with the reports it made.
type UvtReactor struct {
	*reactor.Reactor
	mu      sync.Mutex
	reports []UvtReport
}

// Reports returns the reports made so far.
func (u *UvtReactor) Reports() []UvtReport {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]UvtReport(nil), u.reports...)
}

// UvtNewReactor returns a reactor on the build's default driver whose
// reports are recorded. At cleanup the reactor is closed (if the test did
// not, a t.Fatal on the way or a test that leaves it to the cleanup) and
// checked to hold nothing (uvtNoneLeft).
func UvtNewReactor(t testing.TB) *UvtReactor { return UvtNewReactorOn(t, reactor.DriverAuto) }

// UvtEachDriver runs fn once per driver, as subtests, each on a fresh
// reactor; the libuv driver is skipped, saying so, in a build without cgo.
func UvtEachDriver(t *testing.T, fn func(t *testing.T, u *UvtReactor)) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) { fn(t, UvtNewReactorOn(t, d)) })
}

// UvtNewReactorOn is UvtNewReactor on driver d. A driver this build does
// not have (libuv without cgo) skips the test, saying so.
func UvtNewReactorOn(t testing.TB, d reactor.Driver) *UvtReactor {
	t.Helper()
	u := &UvtReactor{}
	// The watchdog's threshold is a minute: a loaded machine (CI on two
	// shared cores) stalls a loop for more than the default second without
	// any callback blocking, and a test fails on its unexpected reports.
	// reactor's own tests pin the watchdog.
	r, err := reactor.New(reactor.Options{Driver: d, BlockedAfter: time.Minute, OnReport: func(ev event.Event, msg string, err error) {
		info := "<nil>"
		if ev != nil {
			info = ev.Info()
		}
		u.mu.Lock()
		u.reports = append(u.reports, UvtReport{Info: info, Msg: msg, Err: err})
		u.mu.Unlock()
	}})
	if errors.Is(err, reactor.ErrNoLibuv) {
		t.Skipf("the %s driver is not in this build (no cgo)", d)
	}
	if err != nil {
		t.Fatalf("reactor.New: %v", err)
	}
	u.Reactor = r
	t.Cleanup(func() {
		r.Close()
		uvtNoneLeft(t, u)
	})
	return u
}

// uvtNoneLeft checks that a closed reactor holds nothing (conform.NoneLeft)
// and that no poller of the pure-Go driver is left. Every reactor made by
// UvtNewReactorOn is checked so at cleanup, as net's TestMain reports the
// sockets a test leaked.
func uvtNoneLeft(t testing.TB, u *UvtReactor) {
	t.Helper()
	conform.NoneLeft(t, u.Reactor)
	if pl := uvtPoller(u); pl != nil {
		t.Errorf("after Close: the pure-Go driver's poller is left, with %d polls", len(pl.byFD))
	}
}

// UvtShutdown ends a test that created a reactor, in the libuv habit: the
// reactor closes cleanly (its uv_loop_close succeeded, which libuv refuses
// with EBUSY while any handle is still allocated), closing it again is a
// no-op, no C handle is left, and nothing was reported unless the test said
// it expected reports.
func UvtShutdown(t testing.TB, u *UvtReactor, reportsExpected bool) {
	t.Helper()
	if err := u.Close(); err != nil {
		t.Fatalf("reactor Close: %v", err)
	}
	if err := u.Close(); err != nil {
		t.Errorf("second reactor Close = %v, want nil (no-op)", err)
	}
	uvtNoneLeft(t, u)
	if err := u.RunOnce(context.Background()); !errors.Is(err, reactor.ErrReactorClosed) {
		t.Errorf("RunOnce after Close = %v, want ErrReactorClosed", err)
	}
	if reps := u.Reports(); len(reps) > 0 && !reportsExpected {
		t.Errorf("unexpected reports: %v", reps)
	}
}

// UvtCHandles returns the reactor's live C handles and its trigger count.
func UvtCHandles(t testing.TB, u *UvtReactor) (chandles, triggers int) {
	t.Helper()
	s := u.Stats()
	return s.CHandles, s.Handles["trigger"]
}

// UvtTurnUntil runs loop turns (RunOnce) until cond holds. RunOnce waits for
// something to do, so a turn that never comes fails at the safety deadline.
func UvtTurnUntil(t testing.TB, u *UvtReactor, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), UvtSafety)
	defer cancel()
	for !cond() {
		if err := u.RunOnce(ctx); err != nil {
			t.Fatalf("waiting for %s: RunOnce: %v", what, err)
		}
	}
}

// UvtCollectUntil runs the collector and loop turns until cond holds: what
// a program that forgot Close relies on.
func UvtCollectUntil(t testing.TB, u *UvtReactor, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(UvtSafety)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: still not done after %v", what, UvtSafety)
		}
		runtime.GC()
		// Each turn waits a little at most: the cleanups may have closed
		// what they found before the turn began (Go-owned events close at
		// once, without a turn), leaving it nothing to wait for. The bound
		// only keeps the loop going; it decides nothing.
		turn, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
		err := u.RunOnce(turn)
		cancel()
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("waiting for %s: RunOnce: %v", what, err)
		}
		if !cond() {
			runtime.Gosched() // let the cleanup goroutine queue what the GC found
		}
	}
}

// UvtServe drives the loop with Serve on a new goroutine. The returned stop
// ends Serve and checks it returned because of that.
func UvtServe(t testing.TB, u *UvtReactor) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- u.Serve(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil && !errors.Is(err, context.Canceled) {
					t.Errorf("Serve returned %v", err)
				}
			case <-time.After(UvtSafety):
				t.Fatalf("Serve did not return after cancel")
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// UvtRecv waits for one value from ch, failing at the safety deadline.
func UvtRecv[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(UvtSafety):
		t.Fatalf("no %s before the safety deadline", what)
		panic("unreachable")
	}
}

// UvtWaitFor polls cond, yielding between looks, until it holds; the safety
// deadline only turns a hang into a failure.
func UvtWaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(UvtSafety)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s before the safety deadline", what)
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// UvtInstrumented names the instrumentation the test binary was built with
// ("race", "asan", "msan"), or "" for none.
func UvtInstrumented() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "-race", "-asan", "-msan":
			if s.Value == "true" {
				return s.Key[1:]
			}
		}
	}
	return ""
}

// UvtCounter is a subscriber that records its notifications.
type UvtCounter struct {
	mu    sync.Mutex
	calls []UvtCall
	ch    chan UvtCall
}

// UvtCall is one notification seen by a UvtCounter.
type UvtCall struct {
	Event  event.Event
	Result any
	Err    error
	OnLoop bool // r.Owner().Owned() inside the callback
}

// UvtSubscribe subscribes a new counter to ev; owned is asked inside each
// callback whether it runs on the loop goroutine.
func UvtSubscribe(t testing.TB, ev event.Event, owned func() bool) *UvtCounter {
	t.Helper()
	c := &UvtCounter{ch: make(chan UvtCall, 1024)}
	_, err := event.Subscribe(ev, func(ev event.Event, res any, err error) {
		call := UvtCall{Event: ev, Result: res, Err: err, OnLoop: owned()}
		c.mu.Lock()
		c.calls = append(c.calls, call)
		c.mu.Unlock()
		select {
		case c.ch <- call:
		default:
		}
	})
	if err != nil {
		t.Fatalf("Subscribe: %v", err)
	}
	return c
}

// Calls returns the notifications seen so far.
func (c *UvtCounter) Calls() []UvtCall {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]UvtCall(nil), c.calls...)
}

// N returns how many notifications were seen.
func (c *UvtCounter) N() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.calls)
}

// Next waits for the next notification.
func (c *UvtCounter) Next(t testing.TB) UvtCall {
	t.Helper()
	return UvtRecv(t, c.ch, "notification")
}

// UvtFence returns once libuv has run the async callbacks of every Send
// that returned before the call. The loop must not be running. It sends to
// a fresh started trigger and turns until that one fires: libuv runs all
// pending asyncs of a loop in one scan, and every earlier send was pending
// before the fence's. The fence is closed and its handle freed on return:
// the wait is for the fence's own close callback, not for a count of C
// handles, which other handles still closing (closed right before the
// fence) would leave above where it started.
func UvtFence(t testing.TB, u *UvtReactor) {
	t.Helper()
	// On the pure-Go driver, descriptors' readiness reaches the loop
	// through the poller's goroutine: a pass now delivers what is ready.
	u.Call(func() {
		if pl := uvtPoller(u); pl != nil {
			pl.deliver()
		}
	})
	f, err := NewTrigger(u.Reactor)
	if err != nil {
		t.Fatalf("fence: %v", err)
	}
	c := UvtSubscribe(t, f, u.Owner().Owned)
	if err := f.Start(); err != nil {
		t.Fatalf("fence Start: %v", err)
	}
	if err := f.Send(); err != nil {
		t.Fatalf("fence Send: %v", err)
	}
	UvtTurnUntil(t, u, "the fence trigger", func() bool { return c.N() == 1 })
	e, cOwned := f.e.(*triggerEvent) // the pure-Go driver's trigger has no C handle to free
	f.Close()
	if cOwned {
		host := kind.HostOf(u.Owner())
		UvtTurnUntil(t, u, "the fence's close callback", func() (retired bool) {
			u.Call(func() { retired = host.Retired(e.id) })
			return retired
		})
	}
}

// UvtMust fails the test at once if err is not nil.
func UvtMust(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// UvtCounts is what a test checks of a reactor's C handles.
type UvtCounts struct{ CHandles, Triggers int }

// UvtCountsOf returns the reactor's live C handles and triggers.
func UvtCountsOf(t testing.TB, u *UvtReactor) UvtCounts {
	t.Helper()
	c, n := UvtCHandles(t, u)
	return UvtCounts{c, n}
}

// UvtNewTrigger creates a trigger on u or fails the test.
func UvtNewTrigger(t testing.TB, u *UvtReactor) *Trigger {
	t.Helper()
	tr, err := NewTrigger(u.Reactor)
	if err != nil {
		t.Fatalf("NewTrigger: %v", err)
	}
	return tr
}

// UvtFinish closes the triggers (the loop must not be running), turns until
// libuv freed every handle, and shuts the reactor down with UvtShutdown.
func UvtFinish(t testing.TB, u *UvtReactor, triggers ...*Trigger) {
	t.Helper()
	for _, tr := range triggers {
		UvtMust(t, tr.Close())
	}
	UvtTurnUntil(t, u, "the close callbacks", func() bool { return UvtCountsOf(t, u) == UvtCounts{} })
	UvtShutdown(t, u, false)
}

var uvtInfoRE = regexp.MustCompile(`^Trigger\(sent=(\d+), fired=(\d+)\)$`)

// UvtInfoCounts checks that tr's Info has the form Trigger(sent=N, fired=M)
// and returns N and M.
func UvtInfoCounts(t testing.TB, tr *Trigger) (sent, fired int) {
	t.Helper()
	info := tr.Info()
	m := uvtInfoRE.FindStringSubmatch(info)
	if m == nil {
		t.Fatalf("Info = %q, want Trigger(sent=N, fired=M)", info)
	}
	sent, _ = strconv.Atoi(m[1])
	fired, _ = strconv.Atoi(m[2])
	return sent, fired
}

// UvtNeedsLibuv skips a test of libuv-specific machinery (C handles, the
// id table, libuv's own timers and requests) in a build without cgo, where
// reactors run the pure-Go driver; the rules it checks that hold on both
// drivers are checked there by the conformance table.
func UvtNeedsLibuv(t testing.TB) {
	t.Helper()
	if !conform.Available(reactor.DriverLibuv) {
		t.Skip("needs the libuv driver, not in this build (no cgo)")
	}
}

// UvtFixture returns the absolute path of a file under the repository's
// top-level testdata directory.
func UvtFixture(t testing.TB, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("fixture: %v", err)
	}
	return p
}

// UvtNoLeaks checks, after a test closed what it made, that the goroutine
// count comes back to base and the open descriptors to fds (both taken by
// UvtBaseline before the test). Goroutines and descriptors of finished work
// go away a little after the event completes, so it waits for them (the
// safety deadline only turns a leak into a failure).
func UvtNoLeaks(t testing.TB, base, fds int) {
	t.Helper()
	deadline := time.Now().Add(UvtSafety)
	for {
		runtime.GC()
		g, f := runtime.NumGoroutine(), UvtOpenFDs(t)
		if g <= base && f <= fds {
			return
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			buf = buf[:runtime.Stack(buf, true)]
			t.Fatalf("leak: %d goroutines (base %d), %d descriptors (base %d): %s\n%s", g, base, f, fds, uvtFDList(), buf)
		}
		time.Sleep(time.Millisecond)
	}
}

// UvtBaseline returns the goroutine and open descriptor counts now.
func UvtBaseline(t testing.TB) (goroutines, fds int) {
	t.Helper()
	// The netpoller's descriptors are opened at its first use, and libuv's
	// process-wide ones (its signal lock pipe, /dev/null) at the first
	// loop, for good: make sure that happened before counting.
	if rd, wr, err := os.Pipe(); err == nil {
		rd.Close()
		wr.Close()
	}
	// A throwaway reactor, not a test's (UvtNewReactorOn): it only makes
	// those descriptors open, and is closed at once.
	if r, err := reactor.New(reactor.Options{}); err == nil {
		r.Close()
	}
	// So is the /dev/null children's ignored streams share.
	devNull()
	// So is os/signal's relaying goroutine, at the first Notify.
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGWINCH)
	signal.Stop(c)
	runtime.GC()
	return runtime.NumGoroutine(), UvtOpenFDs(t)
}

// UvtOpenFDs counts the process's open descriptors.
func UvtOpenFDs(t testing.TB) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatalf("open descriptors: %v", err)
	}
	return len(ents)
}

// UvtOpenSockets counts the process's open socket descriptors: unlike
// UvtOpenFDs, it does not move when a reactor makes a descriptor of its own
// on first use (the epoll set its loop parks on after a call from another
// goroutine).
func UvtOpenSockets(t testing.TB) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatalf("open descriptors: %v", err)
	}
	n := 0
	for _, e := range ents {
		if target, _ := os.Readlink("/proc/self/fd/" + e.Name()); strings.HasPrefix(target, "socket:") {
			n++
		}
	}
	return n
}

// uvtFDList names the open descriptors, for a leak report.
func uvtFDList() string {
	ents, _ := os.ReadDir("/proc/self/fd")
	var b strings.Builder
	for _, e := range ents {
		target, _ := os.Readlink("/proc/self/fd/" + e.Name())
		fmt.Fprintf(&b, " %s→%s", e.Name(), target)
	}
	return b.String()
}

// UvtDropWithoutClose is the drop test of the Go-owned kinds: under
// GOGC=10 it makes n events with create and drops them without Close, runs
// the loop until they are done, and checks that nothing is active or left
// behind (goroutines, descriptors) once the reactor is closed.
func UvtDropWithoutClose(t *testing.T, n int, create func(u *UvtReactor, i int) error) {
	t.Helper()
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	base, fds := UvtBaseline(t)
	u := UvtNewReactor(t)
	for i := range n {
		if err := create(u, i); err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
	}
	UvtMust(t, u.Run(context.Background()))
	if got := u.Stats().Active; got != 0 {
		t.Errorf("Active = %d after Run, want 0", got)
	}
	UvtShutdown(t, u, false)
	UvtNoLeaks(t, base, fds)
}
