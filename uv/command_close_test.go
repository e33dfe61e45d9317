package uv_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

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
