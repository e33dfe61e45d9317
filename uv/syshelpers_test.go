package uv

// Test helpers for the Go-owned system kinds (Signal, Process, Exec, Task,
// Thread), and the re-exec of the test binary as a child process: tests
// that could take the whole process down (a signal storm, a disposition
// handed back to the default) run in a child, as os/signal's tests do.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/uvevent/uvevent/reactor"
)

// uvtChildEnv names the child role a re-executed test binary plays.
const uvtChildEnv = "UVEVENT_TEST_CHILD"

// uvtChildren are the roles a child can play; each returns the exit code.
var uvtChildren = map[string]func() int{}

// UvtRegisterChild makes fn a child role. Call it from an init function.
func UvtRegisterChild(name string, fn func() int) { uvtChildren[name] = fn }

// TestMain runs a child role when the binary was re-executed as one, and
// the tests otherwise.
func TestMain(m *testing.M) {
	if addr := os.Getenv("UVT_MANY_CLIENT"); addr != "" {
		os.Exit(manyClient(addr)) // io_many_test.go's client process
	}
	if name := os.Getenv(uvtChildEnv); name != "" {
		fn, ok := uvtChildren[name]
		if !ok {
			fmt.Fprintf(os.Stderr, "unknown child role %q\n", name)
			os.Exit(3)
		}
		os.Exit(fn())
	}
	// The test process itself keeps a catch-all registration for the
	// signals the in-process tests raise: a delivery that lands after a
	// test's last Stop (kill(2) to a multi-threaded process may be handled
	// on another thread a moment later) must not end the whole test binary
	// with SIGUSR1's default action. It is also one more os/signal user
	// beside the dispatcher, which must coexist with it. What the default
	// disposition does once the dispatcher lets go is tested in child
	// processes (TestSignalLastStopRestoresDefault and the storm).
	signal.Notify(make(chan os.Signal, 1), syscall.SIGUSR1, syscall.SIGUSR2)
	os.Exit(m.Run())
}

// UvtRunChild re-executes the test binary in the given role and returns its
// standard output; a failure to start, a safety timeout or an exit status
// other than 0 fails the test with the child's output.
func UvtRunChild(t testing.TB, role string, env ...string) string {
	t.Helper()
	cmd := UvtChildCmd(t, role, env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child %s: %v\nstdout:\n%s\nstderr:\n%s", role, err, out, stderr.String())
	}
	return string(out)
}

// UvtChildCmd returns the command re-executing the test binary in a role,
// killed at the safety deadline.
func UvtChildCmd(t testing.TB, role string, env ...string) *exec.Cmd {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), UvtSafety)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), uvtChildEnv+"="+role), env...)
	return cmd
}

// UvtSignalLines returns how many signal numbers the process-wide
// dispatcher holds registered with os/signal.
func UvtSignalLines() int { return signals.listening() }

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

// UvtStealChild kills p's child and reaps it behind p's back, as a wait
// for any child elsewhere in the program would: p's own wait then finds
// nothing. It holds p's reaping lock meanwhile, so that the theft wins.
func UvtStealChild(p *Process) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := syscall.Kill(p.pid, syscall.SIGKILL); err != nil {
		return err
	}
	var ws syscall.WaitStatus
	_, err := syscall.Wait4(p.pid, &ws, 0, nil)
	return err
}
