package uv_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// spawnChild spawns testdata/child.sh with args, or fails the test.
func spawnChild(t testing.TB, r *reactor.Reactor, opts uv.ProcessOptions, args ...string) *uv.Process {
	t.Helper()
	opts.Args = append([]string{uv.UvtFixture(t, "child.sh")}, args...)
	p, err := uv.StartProcess(r, opts)
	if err != nil {
		t.Fatalf("StartProcess %v: %v", args, err)
	}
	return p
}

// awaitOne waits for ev's outcome from the test goroutine.
func awaitOne(t testing.TB, ev event.Event) event.Outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
	defer cancel()
	outs, err := event.Await(ctx, event.Any(), ev)
	if len(outs) != 1 { // an error outcome comes with err set too
		t.Fatalf("Await %s: %v, %d outcomes", ev.Info(), err, len(outs))
	}
	return outs[0]
}

// The whole lifecycle: spawned started and active, Info with the pid, the
// exit code as result on the loop, closed after it, replayed to a late
// subscriber and to Await, forgotten by LookupProcess.
func TestProcessLifecycle(t *testing.T) {
	base, fds := uv.UvtBaseline(t)
	u := uv.UvtNewReactor(t)
	// Started and subscribed with the loop owned: the child's end cannot
	// be delivered before the subscription.
	var p *uv.Process
	var calls *uv.UvtCounter
	uv.UvtMust(t, u.Call(func() {
		p = spawnChild(t, u.Reactor, uv.ProcessOptions{}, "exit", "3")
		calls = uv.UvtSubscribe(t, p, u.Owner().Owned)
	}))
	if got, want := p.Info(), fmt.Sprintf("Process(pid=%d)", p.Pid()); got != want && got != want[:len(want)-1]+", exit=3)" {
		t.Errorf("Info = %q, want %q", got, want)
	}
	if got := event.StateOf(p); got != event.Active && got != event.StateClosed {
		t.Errorf("state after StartProcess = %v, want active", got)
	}
	// The child may have ended and been forgotten already (its end is
	// delivered at once when no goroutine runs the loop).
	if q, err := uv.LookupProcess(u.Reactor, p.Pid()); err != nil || q != p {
		if _, ended := p.ExitStatus(); !ended || !errors.Is(err, syscall.ECHILD) {
			t.Errorf("LookupProcess = %p, %v; want the same event %p", q, err, p)
		}
	}
	if err := u.Run(context.Background()); err != nil { // returns once the child ended
		t.Fatalf("Run: %v", err)
	}
	want := []uv.UvtCall{{Event: p, Result: 3, OnLoop: true}}
	if diff := cmp.Diff(want, calls.Calls(), eqEvent, cmpopts.EquateErrors()); diff != "" {
		t.Errorf("notifications (-want +got):\n%s", diff)
	}
	if got, want := p.Info(), fmt.Sprintf("Process(pid=%d, exit=3)", p.Pid()); got != want {
		t.Errorf("Info = %q, want %q", got, want)
	}
	if st, ok := p.ExitStatus(); !ok || st != 3 {
		t.Errorf("ExitStatus = %d, %v; want 3, true", st, ok)
	}
	if got := event.StateOf(p); got != event.StateClosed {
		t.Errorf("state = %v, want closed", got)
	}
	if got := awaitOne(t, p); got.Result != 3 || got.Err != nil {
		t.Errorf("Await after the end = %+v, want result 3", got)
	}
	var replayed any
	uv.UvtMust(t, p.Replay(event.NewCallback(func(_ event.Event, res any, _ error) { replayed = res })))
	if replayed != 3 {
		t.Errorf("Replay gave %v, want 3", replayed)
	}
	if _, err := uv.LookupProcess(u.Reactor, p.Pid()); !errors.Is(err, syscall.ECHILD) {
		t.Errorf("LookupProcess after the end = %v, want ECHILD", err)
	}
	if err := p.Start(); !errors.Is(err, event.ErrClosed) {
		t.Errorf("Start after the end = %v, want ErrClosed", err)
	}
	uv.UvtShutdown(t, u, false)
	uv.UvtNoLeaks(t, base, fds)
}

// Kill: a signal ends the child with the negative signal number; after the
// end Kill says the process is done; a bad number is EINVAL.
func TestProcessKill(t *testing.T) {
	u := uv.UvtNewReactor(t)
	p := spawnChild(t, u.Reactor, uv.ProcessOptions{}, "sleep", "100")
	if err := p.Kill(-1); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("Kill(-1) = %v, want EINVAL", err)
	}
	uv.UvtMust(t, p.Kill(0))
	uv.UvtMust(t, p.Kill(syscall.SIGTERM))
	if got := awaitOne(t, p); got.Result != -int(syscall.SIGTERM) {
		t.Errorf("result = %v, want %d", got.Result, -int(syscall.SIGTERM))
	}
	if err := p.Kill(syscall.SIGKILL); !errors.Is(err, os.ErrProcessDone) {
		t.Errorf("Kill after the end = %v, want os.ErrProcessDone", err)
	}
	if got, want := p.Info(), fmt.Sprintf("Process(pid=%d, signal=15)", p.Pid()); got != want {
		t.Errorf("Info = %q, want %q", got, want)
	}
	uv.UvtShutdown(t, u, false)
}

// Standard streams as pipes and files, environment and directory.
func TestProcessStdioEnvDir(t *testing.T) {
	u := uv.UvtNewReactor(t)
	stop := uv.UvtServe(t, u)

	p := spawnChild(t, u.Reactor, uv.ProcessOptions{Stdin: uv.StdioPipe, Stdout: uv.StdioPipe, Stderr: uv.StdioInherit}, "echo")
	io.WriteString(p.Stdin(), "hello\nworld\n")
	p.Stdin().Close()
	out, err := io.ReadAll(p.Stdout())
	p.Stdout().Close()
	if err != nil || string(out) != "hello\nworld\n" {
		t.Errorf("echo through pipes: %q, %v", out, err)
	}
	if p.Stderr() != nil {
		t.Error("Stderr() is not nil for an inherited stream")
	}
	awaitOne(t, p)

	p = spawnChild(t, u.Reactor, uv.ProcessOptions{Stderr: uv.StdioPipe}, "stderr")
	if out, _ := io.ReadAll(p.Stderr()); string(out) != "to stderr\n" {
		t.Errorf("stderr pipe: %q", out)
	}
	p.Stderr().Close()
	awaitOne(t, p)

	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "out"))
	uv.UvtMust(t, err)
	p = spawnChild(t, u.Reactor, uv.ProcessOptions{Env: []string{"UVEVENT_X=forty two"}, Stdout: uv.StdioFile(f)}, "env", "UVEVENT_X")
	awaitOne(t, p)
	f.Close()
	if got, _ := os.ReadFile(f.Name()); string(got) != "forty two\n" {
		t.Errorf("env to a file: %q", got)
	}

	p = spawnChild(t, u.Reactor, uv.ProcessOptions{Dir: dir, Stdout: uv.StdioPipe}, "pwd")
	out, _ = io.ReadAll(p.Stdout())
	p.Stdout().Close()
	real, _ := filepath.EvalSymlinks(dir)
	if got := strings.TrimSpace(string(out)); got != real {
		t.Errorf("pwd = %q, want %q", got, real)
	}
	awaitOne(t, p)
	stop()
	uv.UvtShutdown(t, u, false)
}

// Detached children lead their own session.
func TestProcessDetached(t *testing.T) {
	u := uv.UvtNewReactor(t)
	stop := uv.UvtServe(t, u)
	for _, detached := range []bool{false, true} {
		p := spawnChild(t, u.Reactor, uv.ProcessOptions{Detached: detached, Stdout: uv.StdioPipe}, "sid")
		out, _ := io.ReadAll(p.Stdout())
		p.Stdout().Close()
		awaitOne(t, p)
		f := strings.Fields(string(out))
		if len(f) != 2 {
			t.Fatalf("sid printed %q", out)
		}
		if leader := f[0] == f[1]; leader != detached {
			t.Errorf("Detached=%v: session %s, pid %s", detached, f[0], f[1])
		}
	}
	stop()
	uv.UvtShutdown(t, u, false)
}

// Bad input: clear errors, nothing leaked, the reactor keeps serving.
func TestProcessBadInput(t *testing.T) {
	base, fds := uv.UvtBaseline(t)
	u := uv.UvtNewReactor(t)
	child := uv.UvtFixture(t, "child.sh")
	plain := filepath.Join(t.TempDir(), "plain")
	uv.UvtMust(t, os.WriteFile(plain, []byte("not a program\n"), 0o644))
	closed, err := os.Create(filepath.Join(t.TempDir(), "closed"))
	uv.UvtMust(t, err)
	uv.UvtMust(t, closed.Close())
	for _, tc := range []struct {
		name string
		r    *reactor.Reactor
		opts uv.ProcessOptions
		want error
	}{
		{"nil reactor", nil, uv.ProcessOptions{Args: []string{"/bin/true"}}, syscall.EINVAL},
		{"no args", u.Reactor, uv.ProcessOptions{}, syscall.EINVAL},
		{"no such path", u.Reactor, uv.ProcessOptions{Args: []string{"/nonexistent/program"}}, fs.ErrNotExist},
		{"no such name", u.Reactor, uv.ProcessOptions{Args: []string{"uvevent-no-such-program"}}, exec.ErrNotFound},
		{"not executable", u.Reactor, uv.ProcessOptions{Args: []string{plain}}, syscall.EACCES},
		{"no such dir", u.Reactor, uv.ProcessOptions{Args: []string{child, "exit", "0"}, Dir: "/nonexistent"}, fs.ErrNotExist},
		{"nil file", u.Reactor, uv.ProcessOptions{Args: []string{child, "exit", "0"}, Stdout: uv.StdioFile(nil)}, syscall.EINVAL},
		// A closed file's descriptor reads as -1, which fork and exec would
		// take as "close this stream"; the pipe opened for stdin before it
		// must not leak.
		{"closed file", u.Reactor, uv.ProcessOptions{Args: []string{child, "exit", "0"}, Stdin: uv.StdioPipe, Stdout: uv.StdioFile(closed)}, os.ErrClosed},
		{"closed file (errno)", u.Reactor, uv.ProcessOptions{Args: []string{child, "exit", "0"}, Stdin: uv.StdioPipe, Stderr: uv.StdioFile(closed)}, syscall.EBADF},
		{"nil file after a pipe", u.Reactor, uv.ProcessOptions{Args: []string{child, "exit", "0"}, Stdin: uv.StdioPipe, Stdout: uv.StdioFile(nil)}, syscall.EINVAL},
	} {
		p, err := uv.StartProcess(tc.r, tc.opts)
		if !errors.Is(err, tc.want) || p != nil {
			t.Errorf("%s: StartProcess = %v, %v; want an error matching %v", tc.name, p, err, tc.want)
		}
	}
	if _, err := uv.LookupProcess(u.Reactor, 1); !errors.Is(err, syscall.ECHILD) {
		t.Errorf("LookupProcess(1) = %v, want ECHILD", err)
	}
	p := spawnChild(t, u.Reactor, uv.ProcessOptions{}, "exit", "0")
	uv.UvtMust(t, u.Run(context.Background()))
	if st, ok := p.ExitStatus(); !ok || st != 0 {
		t.Errorf("a good spawn after bad ones: %d, %v", st, ok)
	}
	uv.UvtShutdown(t, u, false)
	uv.UvtNoLeaks(t, base, fds)
}

// Close while the child runs: subscribers hear ErrClosed at once, the
// child keeps running and is still reaped; its status is kept for
// ExitStatus and Replay. Stop makes Run not wait for the child.
func TestProcessCloseWhileBusy(t *testing.T) {
	u := uv.UvtNewReactor(t)
	p := spawnChild(t, u.Reactor, uv.ProcessOptions{}, "sleep", "100")
	uv.UvtMust(t, p.Stop())
	if got := u.Stats().Active; got != 0 {
		t.Errorf("Active = %d after Stop, want 0", got)
	}
	uv.UvtMust(t, p.Start()) // counts again
	if got := u.Stats().Active; got != 1 {
		t.Errorf("Active = %d after Start, want 1", got)
	}
	uv.UvtMust(t, p.Stop())
	uv.UvtMust(t, u.Run(context.Background())) // not held by a stopped child
	calls := uv.UvtSubscribe(t, p, u.Owner().Owned)
	uv.UvtMust(t, p.Close())
	if c := calls.Calls(); len(c) != 1 || !errors.Is(c[0].Err, event.ErrClosed) {
		t.Errorf("after Close: %+v, want one ErrClosed", c)
	}
	uv.UvtMust(t, p.Kill(0)) // still running
	uv.UvtMust(t, p.Kill(syscall.SIGKILL))
	uv.UvtWaitFor(t, "the child's status", func() bool { _, ok := p.ExitStatus(); return ok })
	var got any
	uv.UvtMust(t, p.Replay(event.NewCallback(func(_ event.Event, res any, _ error) { got = res })))
	if got != -9 {
		t.Errorf("Replay after Close = %v, want -9", got)
	}
	if calls.N() != 1 {
		t.Errorf("%d notifications, want only the ErrClosed one", calls.N())
	}
	uv.UvtShutdown(t, u, false)
}

// Children dropped without Close under GOGC=10 leave nothing behind: no
// goroutine, no descriptor, no zombie.
func TestProcessDropWithoutClose(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	base, fds := uv.UvtBaseline(t)
	u := uv.UvtNewReactor(t)
	pids := make([]int, 0, 50)
	for range 50 {
		pids = append(pids, spawnChild(t, u.Reactor, uv.ProcessOptions{Stdout: uv.StdioPipe}, "exit", "0").Pid())
	}
	uv.UvtMust(t, u.Run(context.Background()))
	if got := u.Stats().Active; got != 0 {
		t.Errorf("Active = %d, want 0", got)
	}
	uv.UvtShutdown(t, u, false)
	uv.UvtNoLeaks(t, base, fds)
	for _, pid := range pids {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err == nil {
			if b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); regexp.MustCompile(`\) Z `).Match(b) {
				t.Errorf("pid %d is a zombie", pid)
			}
		}
	}
}

// uv.Process beside os/exec in one program, under load: both reap their
// own children and only those. os/exec never sees "no child processes",
// and every exit code arrives where it belongs.
func TestProcessBesideOsExec(t *testing.T) {
	const each = 100
	child := uv.UvtFixture(t, "child.sh")
	u := uv.UvtNewReactor(t)
	stop := uv.UvtServe(t, u)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	for range 2 { // load: allocation and the collector
		wg.Add(1)
		go func() {
			defer wg.Done()
			var keep [][]byte
			for i := 0; ctx.Err() == nil; i++ {
				keep = append(keep, make([]byte, 1024))
				if len(keep) > 1024 {
					keep = keep[:0]
				}
			}
		}()
	}
	execErrs := make(chan error, each)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < each; i += 4 {
				code := i % 7
				err := exec.Command(child, "exit", fmt.Sprint(code)).Run()
				var ee *exec.ExitError
				switch {
				case code == 0 && err != nil, code != 0 && !errors.As(err, &ee):
					execErrs <- fmt.Errorf("os/exec child %d: %v", i, err)
				case code != 0 && ee.ExitCode() != code:
					execErrs <- fmt.Errorf("os/exec child %d: exit %d, want %d", i, ee.ExitCode(), code)
				}
			}
		}()
	}
	procs := make([]*uv.Process, each)
	for i := range procs {
		procs[i] = spawnChild(t, u.Reactor, uv.ProcessOptions{}, "exit", fmt.Sprint(i%5))
	}
	for i, p := range procs {
		if got := awaitOne(t, p); got.Result != i%5 || got.Err != nil {
			t.Errorf("uv child %d: %+v, want exit %d", i, got, i%5)
		}
	}
	cancel()
	wg.Wait()
	close(execErrs)
	for err := range execErrs {
		t.Error(err)
	}
	stop()
	uv.UvtShutdown(t, u, false)
}

// A child reaped behind the event's back (a wait for any child elsewhere
// in the program) completes the event with ECHILD: the status is lost,
// not invented.
func TestProcessStatusLost(t *testing.T) {
	u := uv.UvtNewReactor(t)
	p := spawnChild(t, u.Reactor, uv.ProcessOptions{}, "sleep", "100")
	uv.UvtMust(t, uv.UvtStealChild(p))
	got := awaitOne(t, p)
	if !errors.Is(got.Err, syscall.ECHILD) || got.Result != nil {
		t.Errorf("outcome %+v, want ECHILD and no result", got)
	}
	if st, ok := p.ExitStatus(); ok {
		t.Errorf("ExitStatus = %d, true; want not ok", st)
	}
	if got, want := p.Info(), fmt.Sprintf("Process(pid=%d, status lost)", p.Pid()); got != want {
		t.Errorf("Info = %q, want %q", got, want)
	}
	uv.UvtShutdown(t, u, false)
}

// Once ExitStatus says the child has ended (Exited is closed), Replay gives
// its result, even before the completion has reached the loop: here the
// loop is busy in a timer's callback that waits for the exit, so the
// completion cannot run until the callback returns.
func TestProcessReplayOnceExited(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		p := spawnChild(t, u.Reactor, uv.ProcessOptions{}, "exit", "3")
		tm, err := u.NewTimer(time.Millisecond, 0)
		uv.UvtMust(t, err)
		var got any
		var replayErr error
		_, err = tm.OnFire(func(error) {
			<-p.Exited()
			if st, ok := p.ExitStatus(); !ok || st != 3 {
				t.Errorf("ExitStatus = %d, %v; want 3, true", st, ok)
			}
			replayErr = p.Replay(event.NewCallback(func(_ event.Event, res any, _ error) { got = res }))
		})
		uv.UvtMust(t, err)
		uv.UvtMust(t, tm.Start())
		uv.UvtMust(t, u.Run(context.Background()))
		if replayErr != nil || got != 3 {
			t.Errorf("Replay from the loop once exited = %v, %v; want 3, nil", got, replayErr)
		}
		uv.UvtShutdown(t, u, false)
	})
}

// fixtureForOthers returns a copy of the fixture name that another user
// can execute, wherever the checkout lives: a test that runs a child as
// another user (Credential) must not depend on the checkout's directory
// being open to that user (a home directory of mode 0700, a mktemp -d
// folder). The copy goes to a directory of its own under os.TempDir, mode
// 0755; when some directory above it is closed to others too, the test is
// skipped with the reason.
func fixtureForOthers(t *testing.T, name string) string {
	t.Helper()
	src, err := os.ReadFile(uv.UvtFixture(t, name))
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "uvevent-fixture-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, src, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, 0o755); err != nil { // whatever the umask
		t.Fatal(err)
	}
	for d := filepath.Dir(dir); ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm()&0o001 == 0 {
			t.Skipf("the temporary directory %s is under %s (mode %v), which other users cannot enter: set TMPDIR to a directory they can reach to run this test", dir, d, fi.Mode().Perm())
		}
		if d == filepath.Dir(d) {
			break
		}
	}
	return p
}

// Credential changes the user and group when this process may, and is
// EPERM when it may not. The program run is a copy outside the checkout,
// so that the test passes wherever the checkout lives.
func TestProcessCredential(t *testing.T) {
	cred := &syscall.Credential{Uid: 65534, Gid: 65534}
	opts := uv.ProcessOptions{Credential: cred, Stdout: uv.StdioPipe}
	if os.Geteuid() == 0 {
		opts.Args = []string{fixtureForOthers(t, "child.sh"), "ids"}
	} else {
		opts.Args = []string{uv.UvtFixture(t, "child.sh"), "ids"}
	}
	u := uv.UvtNewReactor(t)
	stop := uv.UvtServe(t, u)
	p, err := uv.StartProcess(u.Reactor, opts)
	switch {
	case os.Geteuid() != 0:
		if !errors.Is(err, syscall.EPERM) {
			t.Errorf("Credential as uid %d: %v, want EPERM", os.Geteuid(), err)
		}
	case err != nil:
		t.Errorf("Credential as root: %v", err)
	default:
		out, _ := io.ReadAll(p.Stdout())
		p.Stdout().Close()
		awaitOne(t, p)
		if got := strings.Fields(string(out)); !cmp.Equal(got, []string{"65534", "65534"}) {
			t.Errorf("ids = %q, want 65534 65534", got)
		}
	}
	stop()
	uv.UvtShutdown(t, u, false)
}

// lineWaiter collects the lines of a StdioLoop stream from the loop, for
// the test goroutine.
type lineWaiter struct {
	mu    sync.Mutex
	lines []string
}

func (w *lineWaiter) add(line []byte, err error) {
	if err == nil {
		w.mu.Lock()
		w.lines = append(w.lines, string(line))
		w.mu.Unlock()
	}
}

func (w *lineWaiter) has(s string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, l := range w.lines {
		if l == s {
			return true
		}
	}
	return false
}

// spawnGroup starts a shell command leading its own group, whose output
// comes back as lines; it returns once the command printed "ready".
func spawnGroup(t *testing.T, u *uv.UvtReactor, cmd string, opts uv.ProcessOptions) *uv.Process {
	t.Helper()
	opts.Args = []string{"/bin/sh", "-c", cmd}
	opts.Group, opts.Stdout = true, uv.StdioLoop
	p, err := uv.StartProcess(u.Reactor, opts)
	uv.UvtMust(t, err)
	var w lineWaiter
	uv.UvtMust(t, u.Call(func() {
		uv.UvtMust(t, uv.ReadLines(p.StdoutIO(), func(line []byte, err error) {
			w.add(line, err)
			if err != nil {
				p.StdoutIO().Close()
			}
		}))
	}))
	uv.UvtWaitFor(t, "the command to be ready", func() bool { return w.has("ready") })
	return p
}

// Terminate: a child that ignores SIGTERM is killed after the grace
// period with its whole group; the event completes with -9 and Done is
// closed; a second Terminate says the process is done. A child that obeys
// SIGTERM ends by it, and the reactor's Close does not wait for a grace
// period that is not needed. Both drivers.
func TestProcessTerminate(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		stubborn := spawnGroup(t, u, "trap '' TERM; sleep 30 & echo ready; wait", uv.ProcessOptions{})
		members := groupMembers(t, stubborn.Pid())
		obedient := spawnGroup(t, u, "echo ready; exec sleep 30", uv.ProcessOptions{})
		uv.UvtMust(t, stubborn.Terminate(20*time.Millisecond))
		uv.UvtMust(t, obedient.Terminate(time.Hour))
		if got := awaitOne(t, stubborn); got.Result != -int(syscall.SIGKILL) || got.Err != nil {
			t.Errorf("stubborn: %+v, want -9", got)
		}
		if got := awaitOne(t, obedient); got.Result != -int(syscall.SIGTERM) || got.Err != nil {
			t.Errorf("obedient: %+v, want -15", got)
		}
		uv.UvtRecv(t, stubborn.Exited(), "the child's end") // closed with the completion
		if err := obedient.Terminate(0); !errors.Is(err, os.ErrProcessDone) {
			t.Errorf("Terminate after the end = %v, want os.ErrProcessDone", err)
		}
		stop()
		uv.UvtShutdown(t, u, false) // an hour's grace is not waited for
		for _, pid := range append(members, obedient.Pid()) {
			checkGone(t, pid)
		}
	})
}

// KillGroup reaches every process of the child's group (SysProcAttr's
// Setpgid makes a group too); a child without a group of its own refuses
// with ErrNoGroup, a bad signal with EINVAL, a zero Process with
// ErrNilEvent. Both drivers.
func TestProcessKillGroup(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		p := spawnGroup(t, u, "sleep 30 & sleep 30 & echo ready; wait", uv.ProcessOptions{
			SysProcAttr: &syscall.SysProcAttr{Setpgid: true}, // what Group asks for too
		})
		members := groupMembers(t, p.Pid())
		if len(members) != 3 {
			t.Fatalf("group %d: %v, want the shell and two sleeps", p.Pid(), members)
		}
		if err := p.KillGroup(-3); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("KillGroup(-3) = %v, want EINVAL", err)
		}
		uv.UvtMust(t, p.KillGroup(syscall.SIGKILL))
		if got := awaitOne(t, p); got.Result != -int(syscall.SIGKILL) {
			t.Errorf("result %v, want -9", got.Result)
		}
		uv.UvtWaitFor(t, "the group's end", func() bool { return len(groupMembers(t, p.Pid())) == 0 })
		for _, pid := range members {
			checkGone(t, pid)
		}
		if err := p.KillGroup(syscall.SIGKILL); !errors.Is(err, os.ErrProcessDone) {
			t.Errorf("KillGroup after the group's end = %v, want os.ErrProcessDone", err)
		}
		lone := spawnChild(t, u.Reactor, uv.ProcessOptions{}, "sleep", "30")
		if err := lone.KillGroup(syscall.SIGTERM); !errors.Is(err, uv.ErrNoGroup) || !errors.Is(err, syscall.EINVAL) {
			t.Errorf("KillGroup without a group = %v, want ErrNoGroup", err)
		}
		uv.UvtMust(t, lone.Terminate(0))
		awaitOne(t, lone)
		var zero uv.Process
		for name, err := range map[string]error{"KillGroup": zero.KillGroup(syscall.SIGTERM), "Terminate": zero.Terminate(0)} {
			if !errors.Is(err, event.ErrNilEvent) {
				t.Errorf("zero Process: %s = %v, want ErrNilEvent", name, err)
			}
		}
		if zero.Exited() != nil {
			t.Error("zero Process: Done is not nil")
		}
		stop()
		uv.UvtShutdown(t, u, false)
	})
}

// Context: a child whose context ends is terminated (Grace 0: SIGKILL);
// the event completes with the signal and the context's error. A context
// done before the start starts nothing. Bad options are EINVAL. Both
// drivers.
func TestProcessContext(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		ctx, cancel := context.WithCancel(context.Background())
		p := spawnChild(t, u.Reactor, uv.ProcessOptions{Context: ctx}, "sleep", "30")
		uv.UvtMust(t, p.Kill(0))
		cancel()
		got := awaitOne(t, p)
		if got.Result != -int(syscall.SIGKILL) || !errors.Is(got.Err, context.Canceled) {
			t.Errorf("outcome %+v, want -9 and context.Canceled", got)
		}
		if st, ok := p.ExitStatus(); !ok || st != -int(syscall.SIGKILL) {
			t.Errorf("ExitStatus = %d, %v", st, ok)
		}
		for name, tc := range map[string]struct {
			opts uv.ProcessOptions
			want error
		}{
			"done context":   {uv.ProcessOptions{Context: ctx}, context.Canceled},
			"negative grace": {uv.ProcessOptions{Grace: -1}, syscall.EINVAL},
			"pidfd":          {uv.ProcessOptions{SysProcAttr: pidFDAttr()}, syscall.EINVAL},
		} {
			if name == "pidfd" && tc.opts.SysProcAttr == nil {
				t.Logf("no pidfd on %s: its refusal is not checked", runtime.GOOS)
				continue
			}
			tc.opts.Args = []string{"/bin/true"}
			if q, err := uv.StartProcess(u.Reactor, tc.opts); !errors.Is(err, tc.want) || q != nil {
				t.Errorf("%s: StartProcess = %v, %v; want an error matching %v", name, q, err, tc.want)
			}
		}
		if err := p.Terminate(-time.Second); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("Terminate(-1s) = %v, want EINVAL", err)
		}
		uv.UvtShutdown(t, u, false)
	})
}

// KillOnClose: Close of the event terminates the child (and its group)
// and the reactor's Close waits until it is gone; without it the child
// runs on after Close (TestProcessCloseWhileBusy). Both drivers, closed
// by the event's Close and by the reactor's.
func TestProcessKillOnClose(t *testing.T) {
	for _, byReactor := range []bool{false, true} {
		name := "Process.Close"
		if byReactor {
			name = "reactor.Close"
		}
		t.Run(name, func(t *testing.T) {
			uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
				stop := uv.UvtServe(t, u)
				p := spawnGroup(t, u, "trap '' TERM; sleep 30 & echo ready; wait", uv.ProcessOptions{KillOnClose: true, Grace: 20 * time.Millisecond})
				members := groupMembers(t, p.Pid())
				if !byReactor {
					uv.UvtMust(t, p.Close())
				}
				stop()
				uv.UvtShutdown(t, u, false)
				select {
				case <-p.Exited():
				default:
					t.Error("Done not closed after the reactor's Close")
				}
				for _, pid := range members {
					checkGone(t, pid)
				}
			})
		})
	}
}

// KillOnClose terminates a child still running when the event is closed,
// as a Command's Close does; a child that ends by itself is closed by
// nobody: its completion signals nothing, and a job it left in its group
// (a shell's background command) runs on, as without KillOnClose.
func TestProcessKillOnCloseCompletionSignalsNothing(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		defer stop()
		// Grace 0: a terminate would SIGKILL the group at once.
		p := spawnGroup(t, u, "sleep 30 & echo ready", uv.ProcessOptions{KillOnClose: true})
		pgid := p.Pid()
		defer syscall.Kill(-pgid, syscall.SIGKILL)
		ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
		defer cancel()
		if _, err := event.Await(ctx, event.Any(), p); err != nil {
			t.Fatalf("the shell's end: %v", err)
		}
		// The completion's pass is over, and with it whatever it signals.
		uv.UvtMust(t, u.Call(func() {}))
		// A SIGKILL sent then ends the job within this watch.
		for end := time.Now().Add(200 * time.Millisecond); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
			if members := groupMembers(t, pgid); len(members) != 1 {
				t.Fatalf("the shell ended by itself, and its group holds %v; want its background job still running", members)
			}
		}
	})
}

// KillOnClose terminates a child still running. A child that ended by
// itself and was reaped is not running, also while its completion is
// still on its way to the loop: a Close then (a callback closing the
// Process in the turn before the one that delivers its end) signals
// nothing, and a job the child left in its group runs on, as when the
// completion came first.
func TestProcessKillOnCloseAfterReap(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		defer stop()
		// Grace 0: a terminate would SIGKILL the group at once.
		p := spawnGroup(t, u, "sleep 30 & echo ready; read x", uv.ProcessOptions{KillOnClose: true, Stdin: uv.StdioPipe})
		pgid := p.Pid()
		defer syscall.Kill(-pgid, syscall.SIGKILL)
		uv.UvtMust(t, u.Call(func() {
			// The loop is held: the completion cannot be delivered before
			// the Close below.
			p.Stdin().Close() // the shell reads the end of its input and exits
			select {
			case <-p.Exited():
			case <-time.After(uv.UvtSafety):
				t.Errorf("the shell did not end")
			}
			if p.Flags().Has(event.Closed) {
				t.Errorf("the completion was delivered while the loop was held")
			}
			uv.UvtMust(t, p.Close())
		}))
		// A SIGKILL sent by the Close ends the job within this watch.
		for end := time.Now().Add(200 * time.Millisecond); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
			if members := groupMembers(t, pgid); len(members) != 1 {
				t.Fatalf("the shell ended by itself before the Close, and its group holds %v; want its background job still running", members)
			}
		}
	})
}
