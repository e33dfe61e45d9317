package uv_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// grandchild reads the pid a script printed with echo $! once it is out,
// and kills that process at the test's end.
func grandchild(t *testing.T, out *heldBuffer) int {
	t.Helper()
	uv.UvtWaitFor(t, "the grandchild's pid", func() bool { return strings.HasSuffix(out.String(), "\n") })
	pid, err := strconv.Atoi(strings.TrimSpace(out.String()))
	if err != nil {
		t.Fatalf("output %q: %v", out.String(), err)
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	return pid
}

// alive reports whether pid runs (it is no child of this process: once
// dead it is reaped by init, or is a zombie of the reaped shell's).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}

// The output of a child that has exited is read until its end, or for
// OutputWait at most when a process it started in the background holds
// the pipe: then the stream is closed and the Process completes with an
// error matching exec.ErrWaitDelay that names the holder — while the
// holder still runs, so its end was not waited for. Both drivers.
func TestProcessOutputHeldByGrandchild(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		out := &heldBuffer{}
		p := startSh(t, u, uv.ProcessOptions{Stdout: uv.StdioWriter(out)}, "sleep 30 & echo $!")
		o := awaitOne(t, p)
		gc := grandchild(t, out)
		if o.Result != 0 || !errors.Is(o.Err, exec.ErrWaitDelay) {
			t.Errorf("completion = %v, %v; want 0 and an error matching exec.ErrWaitDelay", o.Result, o.Err)
		}
		if want := fmt.Sprintf("stdout held by pid %d (sleep)", gc); o.Err == nil || !strings.Contains(o.Err.Error(), want) {
			t.Errorf("completion error %q does not say %q", o.Err, want)
		}
		if !alive(gc) {
			t.Errorf("the grandchild %d is gone: the completion waited for it", gc)
		}
		uv.UvtShutdown(t, u, false)
	})
}

// A KillOnClose child killed by the reactor's Close while a process it
// started holds its StdioWriter output: Close returns once the child is
// reaped and its output bounded, with the holder still running.
func TestProcessKillOnCloseOutputHeld(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		out := &heldBuffer{}
		p := startSh(t, u, uv.ProcessOptions{Stdout: uv.StdioWriter(out), KillOnClose: true},
			"sleep 30 & echo $!; exec sleep 30")
		gc := grandchild(t, out)
		uv.UvtShutdown(t, u, false)
		if status, ok := p.ExitStatus(); !ok || status != -int(syscall.SIGKILL) {
			t.Errorf("ExitStatus = %d, %v; want -9, true", status, ok)
		}
		if !alive(gc) {
			t.Errorf("the grandchild %d is gone: Close waited for it", gc)
		}
	})
}

// While the reactor's Close waits for a child reaped whose output is
// still open, Shutdown's error names the child as reaped and who holds
// its output, not as running; once the holder ends, Close ends.
func TestShutdownNamesWhatHoldsTheOutput(t *testing.T) {
	uv.UvtSetOutputWait(t, uv.UvtSafety) // the holder, not the bound, ends the wait
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		out := &heldBuffer{}
		p := startSh(t, u, uv.ProcessOptions{Stdout: uv.StdioWriter(out), KillOnClose: true},
			"sleep 30 & echo $!; exec sleep 30")
		gc := grandchild(t, out)
		cancelled, cancel := context.WithCancel(context.Background())
		cancel()
		// The Close kills the child; its output stays open.
		if err := u.Shutdown(cancelled); !errors.Is(err, reactor.ErrCloseIncomplete) {
			t.Fatalf("Shutdown = %v, want ErrCloseIncomplete", err)
		}
		uv.UvtWaitFor(t, "the child reaped", func() bool { return errors.Is(p.Kill(0), os.ErrProcessDone) })
		err := u.Shutdown(cancelled)
		if !errors.Is(err, reactor.ErrCloseIncomplete) {
			t.Fatalf("Shutdown = %v, want ErrCloseIncomplete", err)
		}
		want := fmt.Sprintf(`Process\(pid=%d, \S+\) reaped, reading its output .*: stdout held by pid %d \(`, p.Pid(), gc)
		if msg := err.Error(); !regexp.MustCompile(want).MatchString(msg) || strings.Contains(msg, "running") {
			t.Errorf("Shutdown = %q; want it to match %q, and not say running", msg, want)
		}
		syscall.Kill(gc, syscall.SIGKILL)
		uv.UvtShutdown(t, u, false)
	})
}
