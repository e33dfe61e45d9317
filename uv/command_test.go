package uv_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/uvevent/uvevent/event"
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
