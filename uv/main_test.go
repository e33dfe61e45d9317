package uv

// TestMain, and the re-exec of the test binary as a child process: tests
// that could take the whole process down (a signal storm, a disposition
// handed back to the default) run in a child, as os/signal's tests do.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"testing"
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
		os.Exit(manyClient(addr)) // io_test.go's client process
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
