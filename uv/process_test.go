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
