package uv_test

import (
	"context"
	"errors"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/uv"
)

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
			"pidfd":          {uv.ProcessOptions{SysProcAttr: &syscall.SysProcAttr{PidFD: new(int)}}, syscall.EINVAL},
		} {
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
