package uv_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// syncBuffer is a bytes.Buffer safe for the writer goroutine of a Command
// and the test's reads, telling a channel about each write.
type syncBuffer struct {
	mu    sync.Mutex
	b     bytes.Buffer
	wrote chan struct{}
}

func newSyncBuffer() *syncBuffer { return &syncBuffer{wrote: make(chan struct{}, 1)} }

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case s.wrote <- struct{}{}:
	default:
	}
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// newCommand starts a Command or fails the test.
func newCommand(t testing.TB, u *uv.UvtReactor, cmd string, opts uv.CommandOptions) *uv.Command {
	t.Helper()
	e, err := uv.NewCommand(u.Reactor, cmd, opts)
	if err != nil {
		t.Fatalf("NewCommand(%q): %v", cmd, err)
	}
	return e
}

// replayed returns the result an event replays.
func replayed(t testing.TB, ev event.Event) (any, error) {
	t.Helper()
	var res any
	var rerr error
	uv.UvtMust(t, ev.Replay(event.NewCallback(func(_ event.Event, r any, err error) { res, rerr = r, err })))
	return res, rerr
}

// The four modes on one command: what is collected, what is passed
// through, the exit code; Info before and after.
func TestCommandModes(t *testing.T) {
	const cmd = `printf 'one\ntwo  \nthree'; exit 3`
	for _, tc := range []struct {
		mode    uv.OutputMode
		want    uv.CommandResult
		through string
	}{
		{uv.CaptureLines, uv.CommandResult{Mode: uv.CaptureLines, Lines: []string{"one", "two", "three"}, Last: "three", ExitCode: 3}, ""},
		{uv.StreamLines, uv.CommandResult{Mode: uv.StreamLines, Last: "three", ExitCode: 3}, "one\ntwo  \nthree"},
		{uv.StreamRaw, uv.CommandResult{Mode: uv.StreamRaw, ExitCode: 3}, "one\ntwo  \nthree"},
		{uv.CaptureAll, uv.CommandResult{Mode: uv.CaptureAll, Output: []byte("one\ntwo  \nthree"), ExitCode: 3}, ""},
	} {
		t.Run(tc.mode.String(), func(t *testing.T) {
			u := uv.UvtNewReactor(t)
			out := newSyncBuffer()
			var e *uv.Command
			var calls *uv.UvtCounter
			uv.UvtMust(t, u.Call(func() { // nothing completes before the subscription
				e = newCommand(t, u, cmd, uv.CommandOptions{Mode: tc.mode, Out: out})
				calls = uv.UvtSubscribe(t, e, u.Owner().Owned)
			}))
			if got, want := e.Info(), fmt.Sprintf("Command(mode=%v, pid=%d", tc.mode, e.Pid()); !strings.HasPrefix(got, want) {
				t.Errorf("Info = %q, want %q…", got, want)
			}
			uv.UvtMust(t, u.Run(context.Background()))
			c := calls.Calls()
			if len(c) != 1 || c[0].Err != nil || !c[0].OnLoop {
				t.Fatalf("notifications %+v, want one result on the loop", c)
			}
			if diff := cmp.Diff(&tc.want, c[0].Result); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
			if got := out.String(); got != tc.through {
				t.Errorf("passed through %q, want %q", got, tc.through)
			}
			if got, want := e.Info(), fmt.Sprintf("Command(mode=%v, pid=%d, exit=3)", tc.mode, e.Pid()); got != want {
				t.Errorf("Info = %q, want %q", got, want)
			}
			if res, _ := replayed(t, e); !cmp.Equal(res, c[0].Result) {
				t.Errorf("replay %v, want %v", res, c[0].Result)
			}
			uv.UvtShutdown(t, u, false)
		})
	}
}

// Lines: trailing whitespace goes, a blank last line counts, a command the
// shell cannot find exits 127 (a result, not an error), env and dir apply.
func TestCommandLinesEnvDir(t *testing.T) {
	u := uv.UvtNewReactor(t)
	dir := t.TempDir()
	child := uv.UvtFixture(t, "child.sh")
	a := newCommand(t, u, child+" lines", uv.CommandOptions{})
	b := newCommand(t, u, "uvevent-no-such-command 2>/dev/null", uv.CommandOptions{Mode: uv.CaptureAll})
	c := newCommand(t, u, `printf '%s:' "$UVEVENT_Y"; pwd -P`, uv.CommandOptions{Mode: uv.CaptureAll, Env: []string{"UVEVENT_Y=y"}, Dir: dir})
	uv.UvtMust(t, u.Run(context.Background()))
	ra, _ := replayed(t, a)
	if diff := cmp.Diff(&uv.CommandResult{Lines: []string{"one", "two", "three", ""}}, ra); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
	if rb, _ := replayed(t, b); rb.(*uv.CommandResult).ExitCode != 127 {
		t.Errorf("missing command: %+v, want exit 127", rb)
	}
	rc, _ := replayed(t, c)
	if got := string(rc.(*uv.CommandResult).Output); !strings.HasPrefix(got, "y:/") || !strings.HasSuffix(got, "\n") {
		t.Errorf("env and dir: %q", got)
	}
	uv.UvtShutdown(t, u, false)
}

// A timeout is honoured: the command gets SIGTERM; the result says so and
// the error is ErrTimeout.
func TestCommandTimeout(t *testing.T) {
	u := uv.UvtNewReactor(t)
	e := newCommand(t, u, "sleep 100", uv.CommandOptions{Timeout: 20 * time.Millisecond})
	uv.UvtMust(t, u.Run(context.Background()))
	res, err := replayed(t, e)
	if !errors.Is(err, event.ErrTimeout) {
		t.Errorf("err = %v, want ErrTimeout", err)
	}
	if r := res.(*uv.CommandResult); !r.TimedOut || r.ExitCode != -int(syscall.SIGTERM) {
		t.Errorf("result %+v, want TimedOut and exit -15", r)
	}
	uv.UvtShutdown(t, u, false)
}

// Close while the command runs: subscribers hear ErrClosed; the command
// gets SIGTERM, and SIGKILL after the grace period when it ignores
// SIGTERM. Its result is still stored.
func TestCommandCloseWhileBusy(t *testing.T) {
	u := uv.UvtNewReactor(t)
	stop := uv.UvtServe(t, u)
	out := newSyncBuffer()
	e := newCommand(t, u, "trap '' TERM; echo ready; while :; do sleep 1; done", uv.CommandOptions{Mode: uv.StreamRaw, Out: out, Grace: 10 * time.Millisecond})
	plain := newCommand(t, u, "sleep 100", uv.CommandOptions{})
	// The shell ends by SIGTERM only if it runs before the SIGKILL comes:
	// a grace no machine's load outlasts, cut short by the test once the
	// shell has ended (the grandchild ignores SIGTERM).
	grand := newCommand(t, u, uv.UvtFixture(t, "child.sh")+" term-ignored", uv.CommandOptions{Grace: uv.UvtSafety})
	calls := uv.UvtSubscribe(t, e, u.Owner().Owned)
	uv.UvtWaitFor(t, "the child's trap", func() bool { return strings.Contains(out.String(), "ready") })
	uv.UvtMust(t, e.Close())
	uv.UvtMust(t, plain.Close())
	uv.UvtMust(t, grand.Close()) // the shell ends by SIGTERM; its grandchild lives on
	if c := calls.Next(t); !errors.Is(c.Err, event.ErrClosed) {
		t.Errorf("notification %+v, want ErrClosed", c)
	}
	uv.UvtWaitFor(t, "grand's shell to end", func() bool {
		st, _, _, ok := procStat(grand.Pid())
		return !ok || st == 'Z'
	})
	syscall.Kill(-grand.Pid(), syscall.SIGKILL) // the grace period, cut short
	for ev, want := range map[*uv.Command]int{e: -int(syscall.SIGKILL), plain: -int(syscall.SIGTERM), grand: -int(syscall.SIGTERM)} {
		uv.UvtWaitFor(t, "the result", func() bool { return ev.Replay(event.NewCallback(func(event.Event, any, error) {})) == nil })
		if res, _ := replayed(t, ev); res.(*uv.CommandResult).ExitCode != want {
			t.Errorf("%s: exit %d, want %d", ev.Info(), res.(*uv.CommandResult).ExitCode, want)
		}
	}
	stop()
	uv.UvtShutdown(t, u, false)
}

// Bad input: clear errors; the reactor keeps working.
func TestCommandBadInput(t *testing.T) {
	u := uv.UvtNewReactor(t)
	for _, tc := range []struct {
		name string
		cmd  string
		opts uv.CommandOptions
		want error
	}{
		{"empty", " ", uv.CommandOptions{}, syscall.EINVAL},
		{"negative timeout", "true", uv.CommandOptions{Timeout: -1}, syscall.EINVAL},
		{"negative grace", "true", uv.CommandOptions{Grace: -1}, syscall.EINVAL},
		{"bad mode", "true", uv.CommandOptions{Mode: 9}, syscall.EINVAL},
		{"no shell", "true", uv.CommandOptions{Shell: "/nonexistent/sh"}, fs.ErrNotExist},
		{"no dir", "true", uv.CommandOptions{Dir: "/nonexistent"}, fs.ErrNotExist},
	} {
		if e, err := uv.NewCommand(u.Reactor, tc.cmd, tc.opts); !errors.Is(err, tc.want) || e != nil {
			t.Errorf("%s: NewCommand = %v, %v; want an error matching %v", tc.name, e, err, tc.want)
		}
	}
	if _, err := uv.NewCommand(nil, "true", uv.CommandOptions{}); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("nil reactor: %v, want EINVAL", err)
	}
	e := newCommand(t, u, "exit 0", uv.CommandOptions{})
	uv.UvtMust(t, u.Run(context.Background()))
	if res, err := replayed(t, e); err != nil || res.(*uv.CommandResult).ExitCode != 0 {
		t.Errorf("a good command after bad ones: %v, %v", res, err)
	}
	uv.UvtShutdown(t, u, false)
}

// Closing the reactor terminates the commands still running.
func TestCommandReactorClose(t *testing.T) {
	u := uv.UvtNewReactor(t)
	e := newCommand(t, u, "sleep 100", uv.CommandOptions{})
	uv.UvtShutdown(t, u, false)
	// The shell is signalled and reaped: its pid goes away.
	uv.UvtWaitFor(t, "the shell's end", func() bool { return syscall.Kill(e.Pid(), 0) == syscall.ESRCH })
}

// Commands dropped without Close under GOGC=10 leave nothing behind.
func TestCommandDropWithoutClose(t *testing.T) {
	uv.UvtDropWithoutClose(t, 20, func(u *uv.UvtReactor, i int) error {
		_, err := uv.NewCommand(u.Reactor, fmt.Sprintf("echo %d", i), uv.CommandOptions{Mode: uv.CaptureAll})
		return err
	})
}

// procStat reads a process's state and parent from /proc; ok is false
// when there is no such process.
func procStat(pid int) (state byte, ppid, pgrp int, ok bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, 0, false
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:]) // the name may hold spaces
	if len(f) < 3 {
		return 0, 0, 0, false
	}
	ppid, _ = strconv.Atoi(f[1])
	pgrp, _ = strconv.Atoi(f[2])
	return f[0][0], ppid, pgrp, true
}

// groupMembers returns the pids of the live processes in group pgid.
func groupMembers(t testing.TB, pgid int) []int {
	t.Helper()
	dirs, err := filepath.Glob("/proc/[0-9]*")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, d := range dirs {
		pid, _ := strconv.Atoi(filepath.Base(d))
		if st, _, g, ok := procStat(pid); ok && g == pgid && st != 'Z' {
			pids = append(pids, pid)
		}
	}
	return pids
}

// checkGone fails the test unless pid is gone: no such process, or — for
// a grandchild, which its parent's death handed to init — a zombie that
// init, not this process, reaps. A child of this process must be reaped.
func checkGone(t testing.TB, pid int) {
	t.Helper()
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return
	}
	st, ppid, _, ok := procStat(pid)
	switch {
	case !ok:
	case st == 'Z' && ppid != os.Getpid():
		t.Logf("pid %d is dead, a zombie of pid %d (reaping orphans is init's)", pid, ppid)
	default:
		t.Errorf("pid %d is still there: state %c, parent %d", pid, st, ppid)
	}
}

// startTermIgnored starts a command that ignores SIGTERM, with a sleep in
// its group, and returns it with the pids of its group once both run.
func startTermIgnored(t *testing.T, u *uv.UvtReactor, grace time.Duration) (*uv.Command, []int) {
	t.Helper()
	out := newSyncBuffer()
	e := newCommand(t, u, "trap '' TERM; sleep 30 & echo started; wait", uv.CommandOptions{Mode: uv.StreamRaw, Out: out, Grace: grace})
	uv.UvtWaitFor(t, "the command to start its sleep", func() bool { return strings.Contains(out.String(), "started") })
	pids := groupMembers(t, e.Pid())
	if len(pids) < 2 {
		t.Fatalf("group %d holds %v, want the shell and its sleep", e.Pid(), pids)
	}
	return e, pids
}

// The reactor's Close ends a command that ignores SIGTERM before it
// returns: SIGTERM, the grace period, SIGKILL to the group, the shell
// reaped. After Close every process of the command is gone, on both
// drivers, whether the Command was closed first or by the reactor.
func TestCommandCloseKillsBeforeReactorCloseReturns(t *testing.T) {
	for _, explicit := range []bool{false, true} {
		t.Run(fmt.Sprintf("ExecClose=%v", explicit), func(t *testing.T) {
			uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
				stop := uv.UvtServe(t, u)
				e, pids := startTermIgnored(t, u, 50*time.Millisecond)
				if explicit {
					uv.UvtMust(t, e.Close()) // returns at once; the reactor's Close waits
				}
				stop()
				uv.UvtShutdown(t, u, false)
				for _, pid := range pids {
					checkGone(t, pid)
				}
			})
		})
	}
}

// Shutdown whose context ends while a command is in its grace period says
// what still runs (an error matching ErrCloseIncomplete and the context's)
// while it still runs; a later Close waits for the rest.
func TestCommandShutdownContextNamesTheCommand(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		e, pids := startTermIgnored(t, u, time.Hour)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		err := u.Shutdown(ctx)
		if syscall.Kill(e.Pid(), 0) != nil {
			t.Fatal("the shell ended before Shutdown returned")
		}
		if !errors.Is(err, reactor.ErrCloseIncomplete) || !errors.Is(err, context.Canceled) {
			t.Errorf("Shutdown = %v, want ErrCloseIncomplete and context.Canceled", err)
		} else if want := fmt.Sprintf("Command(pid=%d", e.Pid()); !strings.Contains(err.Error(), want) {
			t.Errorf("Shutdown = %q, want it to name %s…", err, want)
		}
		syscall.Kill(-e.Pid(), syscall.SIGKILL) // what the hour of grace would do
		uv.UvtShutdown(t, u, false)
		for _, pid := range pids {
			checkGone(t, pid)
		}
	})
}

// Command.Terminate ends the command without closing the event: it completes
// with the signal (SIGKILL for a command that ignores SIGTERM), Done is
// closed and nothing of the command is alive; then Terminate says the
// command is done. The zero Command refuses. Both drivers.
func TestCommandTerminate(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		e, pids := startTermIgnored(t, u, 20*time.Millisecond)
		uv.UvtMust(t, e.Terminate())
		got := awaitOne(t, e)
		if res, ok := got.Result.(*uv.CommandResult); !ok || res.ExitCode != -int(syscall.SIGKILL) || got.Err != nil {
			t.Errorf("outcome %+v, want exit -9", got)
		}
		uv.UvtRecv(t, e.Exited(), "the command's end")
		for _, pid := range pids {
			checkGone(t, pid)
		}
		if err := e.Terminate(); !errors.Is(err, os.ErrProcessDone) {
			t.Errorf("Terminate after the end = %v, want os.ErrProcessDone", err)
		}
		var zero uv.Command
		if err := zero.Terminate(); !errors.Is(err, event.ErrNilEvent) {
			t.Errorf("zero Command: Terminate = %v, want ErrNilEvent", err)
		}
		stop()
		uv.UvtShutdown(t, u, false)
	})
}

// A Command is over once Exited is closed (the shell reaped, its output at
// its end), also while its completion is still on its way to the loop: a
// Close then (a callback closing it in the turn before the one that
// delivers its end) terminates nothing, and a job the shell left in its
// group, away from the output, runs on, as when the completion came first.
func TestCommandCloseAfterOver(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		defer stop()
		fifo := filepath.Join(t.TempDir(), "go")
		uv.UvtMust(t, syscall.Mkfifo(fifo, 0o600))
		e, err := uv.NewCommand(u.Reactor, "sleep 30 >/dev/null 2>&1 & echo $$; read x < "+fifo, uv.CommandOptions{Grace: time.Millisecond})
		uv.UvtMust(t, err)
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0) // the shell has opened it
		uv.UvtMust(t, err)
		pgid := e.Pid()
		defer syscall.Kill(-pgid, syscall.SIGKILL)
		uv.UvtWaitFor(t, "the background job", func() bool { return len(groupMembers(t, pgid)) == 2 })
		uv.UvtMust(t, u.Call(func() {
			// The loop is held: the completion cannot be delivered before
			// the Close below.
			w.Close() // the shell reads the end of the fifo and exits
			select {
			case <-e.Exited():
			case <-time.After(uv.UvtSafety):
				t.Errorf("the command did not end")
			}
			if e.Flags().Has(event.Closed) {
				t.Errorf("the completion was delivered while the loop was held")
			}
			uv.UvtMust(t, e.Close())
		}))
		for end := time.Now().Add(200 * time.Millisecond); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
			if members := groupMembers(t, pgid); len(members) != 1 {
				t.Fatalf("the command was over before the Close, and its group holds %v; want its background job still running", members)
			}
		}
	})
}
