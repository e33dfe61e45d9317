package uv_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// lineLog records what ReadLines gives: the lines, then how it ended.
type lineLog struct {
	lines []string
	end   error
	ends  int
}

func (l *lineLog) add(line []byte, err error) {
	if err != nil || line == nil {
		l.end, l.ends = err, l.ends+1
		return
	}
	l.lines = append(l.lines, string(line))
}

// StdioLoop: the child's standard streams are IOs on its reactor. Input
// sent on the loop reaches the child; its output and error come back as
// lines through ReadLines, the last without a newline included; each
// stream ends with io.EOF, once; Run returns when the child has ended and
// the streams are closed. Both drivers.
func TestProcessStdioLoop(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		var out, errs lineLog
		var p, q *uv.Process
		uv.UvtMust(t, u.Call(func() {
			p = spawnChild(t, u.Reactor, uv.ProcessOptions{Stdin: uv.StdioLoop, Stdout: uv.StdioLoop}, "echo")
			q = spawnChild(t, u.Reactor, uv.ProcessOptions{Stderr: uv.StdioLoop}, "stderr")
			if p.Stdin() != nil || p.Stdout() != nil || p.StderrIO() != nil || q.StdoutIO() != nil {
				t.Error("an *os.File or an IO for a stream that is not its kind")
			}
			for _, c := range []struct {
				io  *uv.IO
				log *lineLog
			}{{p.StdoutIO(), &out}, {q.StderrIO(), &errs}} {
				uv.UvtMust(t, uv.ReadLines(c.io, func(line []byte, err error) {
					c.log.add(line, err)
					if err != nil {
						c.io.Close()
					}
				}))
			}
			in := p.StdinIO()
			uv.UvtMust(t, in.Send([]byte("one\ntwo\r\n")))
			uv.UvtMust(t, in.Send([]byte("thr")))
			uv.UvtMust(t, in.Send([]byte("ee")))
			uv.UvtMust(t, in.Close()) // the child's input ends
		}))
		uv.UvtMust(t, u.Run(context.Background()))
		if diff := cmp.Diff([]string{"one", "two", "three"}, out.lines); diff != "" {
			t.Errorf("stdout lines (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{"to stderr"}, errs.lines); diff != "" {
			t.Errorf("stderr lines (-want +got):\n%s", diff)
		}
		for _, l := range []lineLog{out, errs} {
			if l.ends != 1 || !errors.Is(l.end, io.EOF) {
				t.Errorf("ended %d times, with %v; want once with io.EOF", l.ends, l.end)
			}
		}
		for _, pr := range []*uv.Process{p, q} {
			if st, ok := pr.ExitStatus(); !ok || st != 0 {
				t.Errorf("%s: exit %d, %v", pr.Info(), st, ok)
			}
		}
		uv.UvtShutdown(t, u, false)
	})
}

// ReadLines on an IO closed before its end gives the partial line, then
// ErrClosed, once; a line longer than MaxLineLength comes in pieces; a nil
// func and a zero IO are refused. Both drivers.
func TestReadLinesCloseAndLongLine(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		var got lineLog
		var a, b *uv.IO
		uv.UvtMust(t, u.Call(func() {
			var err error
			a, b, err = uv.Pipe(u.Reactor)
			uv.UvtMust(t, err)
			if err := uv.ReadLines(a, nil); !errors.Is(err, event.ErrNilCallback) {
				t.Errorf("ReadLines(nil func) = %v, want ErrNilCallback", err)
			}
			if err := uv.ReadLines(&uv.IO{}, got.add); err == nil {
				t.Error("ReadLines on a zero IO: nil error")
			}
			uv.UvtMust(t, uv.ReadLines(a, got.add))
			uv.UvtMust(t, b.Send([]byte(strings.Repeat("x", uv.MaxLineLength+10)+"\nshort\npartial")))
		}))
		uv.UvtTurnUntil(t, u, "the lines", func() bool { return len(got.lines) == 3 })
		uv.UvtMust(t, u.Call(func() { a.Close() }))
		want := []string{strings.Repeat("x", uv.MaxLineLength), "xxxxxxxxxx", "short", "partial"}
		if diff := cmp.Diff(want, got.lines); diff != "" {
			t.Errorf("lines (-want +got):\n%s", diff)
		}
		if got.ends != 1 || !errors.Is(got.end, event.ErrClosed) {
			t.Errorf("ended %d times, with %v; want once with ErrClosed", got.ends, got.end)
		}
		b.Close()
		uv.UvtShutdown(t, u, false)
	})
}

// With StdioLoop, as with StdioWriter and os/exec, a child's exit is
// reported after its output: the callbacks hear every line, then the
// stream's end, then the exit, in that order, run after run. Both drivers.
func TestProcessStdioLoopExitAfterOutput(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		want := []string{"line a", "line b", "line c", "end EOF", "exit 0"}
		for run := range 50 {
			var seen []string
			p := startSh(t, u, uv.ProcessOptions{Stdout: uv.StdioLoop}, "echo a; echo b; printf c")
			out := p.StdoutIO()
			uv.UvtMust(t, u.Call(func() {
				uv.UvtMust(t, uv.ReadLines(out, func(line []byte, err error) {
					if err != nil {
						seen = append(seen, fmt.Sprintf("end %v", err))
						out.Close()
						return
					}
					seen = append(seen, "line "+string(line))
				}))
				event.On(p, func(code int, err error) { seen = append(seen, fmt.Sprintf("exit %d", code)) })
			}))
			uv.UvtMust(t, u.Run(context.Background()))
			if diff := cmp.Diff(want, seen); diff != "" {
				t.Fatalf("run %d: callbacks (-want +got):\n%s", run, diff)
			}
		}
		uv.UvtShutdown(t, u, false)
	})
}

// heldBuffer is a bytes.Buffer safe for the copying goroutine and the
// test; hold, when set, runs at the start of each Write.
type heldBuffer struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	hold func()
}

func (b *heldBuffer) Write(p []byte) (int, error) {
	if b.hold != nil {
		b.hold()
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *heldBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startSh starts sh -c script on u with opts.
func startSh(t *testing.T, u *uv.UvtReactor, opts uv.ProcessOptions, script string) *uv.Process {
	t.Helper()
	opts.Args = []string{"sh", "-c", script}
	p, err := uv.StartProcess(u.Reactor, opts)
	uv.UvtMust(t, err)
	return p
}

// StdioWriter copies a child's output to an io.Writer, as os/exec's
// Cmd.Stdout = w does, and the Process completes only once the copy is
// over, as Cmd.Wait returns: at the completion, on the loop, every byte is
// in the writer, even when the writer is still busy after the child has
// been reaped (here its first Write waits for that). Both drivers.
func TestProcessStdioWriterBeforeCompletion(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		var pid atomic.Int64
		out := &heldBuffer{}
		out.hold = func() {
			out.hold = nil // the first Write only; the copy calls Write from one goroutine
			uv.UvtWaitFor(t, "the child reaped", func() bool {
				_, err := os.Stat(fmt.Sprintf("/proc/%d", pid.Load()))
				return pid.Load() != 0 && errors.Is(err, os.ErrNotExist)
			})
		}
		errs := &heldBuffer{}
		p := startSh(t, u, uv.ProcessOptions{Stdout: uv.StdioWriter(out), Stderr: uv.StdioWriter(errs)},
			"echo one; echo two >&2; echo three")
		pid.Store(int64(p.Pid()))
		if p.Stdout() != nil || p.StdoutIO() != nil || p.Stderr() != nil {
			t.Error("a StdioWriter stream has a parent end to hand out")
		}
		var atCompletion [2]string
		event.On(p, func(int, error) { atCompletion = [2]string{out.String(), errs.String()} })
		o := awaitOne(t, p)
		if o.Err != nil || o.Result != 0 {
			t.Errorf("completion = %v, %v; want 0, nil", o.Result, o.Err)
		}
		if diff := cmp.Diff([2]string{"one\nthree\n", "two\n"}, atCompletion); diff != "" {
			t.Errorf("output at the completion (-want +got):\n%s", diff)
		}
		uv.UvtShutdown(t, u, false)
	})
}

// One writer for both streams is one pipe, as with os/exec: the child's
// output and error arrive in the order written.
func TestProcessStdioWriterShared(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		var out heldBuffer
		w := uv.StdioWriter(&out)
		p := startSh(t, u, uv.ProcessOptions{Stdout: w, Stderr: w}, "echo a; echo b >&2; echo c; echo d >&2")
		if o := awaitOne(t, p); o.Err != nil {
			t.Errorf("completion error: %v", o.Err)
		}
		if got := out.String(); got != "a\nb\nc\nd\n" {
			t.Errorf("output = %q, want a, b, c, d in order", got)
		}
		uv.UvtShutdown(t, u, false)
	})
}

// An *os.File is given to the child as it is (as os/exec does): the
// output lands in the file with no copy.
func TestProcessStdioWriterFile(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		f, err := os.Create(filepath.Join(t.TempDir(), "out"))
		uv.UvtMust(t, err)
		defer f.Close()
		p := startSh(t, u, uv.ProcessOptions{Stdout: uv.StdioWriter(f)}, "echo to the file")
		if o := awaitOne(t, p); o.Err != nil {
			t.Errorf("completion error: %v", o.Err)
		}
		b, err := os.ReadFile(f.Name())
		if err != nil || string(b) != "to the file\n" {
			t.Errorf("file holds %q, %v", b, err)
		}
		uv.UvtShutdown(t, u, false)
	})
}

// failingWriter fails every Write.
type failingWriter struct{ err error }

func (w failingWriter) Write([]byte) (int, error) { return 0, w.err }

// A writer that fails ends the copy; the completion carries its error
// (errors.Is matches it), as Cmd.Wait returns the copy's error.
func TestProcessStdioWriterFails(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		full := errors.New("disk full")
		p := startSh(t, u, uv.ProcessOptions{Stdout: uv.StdioWriter(failingWriter{full})}, "echo lost")
		if o := awaitOne(t, p); !errors.Is(o.Err, full) {
			t.Errorf("completion error = %v, want one matching %v", o.Err, full)
		}
		uv.UvtShutdown(t, u, false)
	})
}

// A nil writer, or a writer as the child's input, is refused with
// EINVAL; nothing is started.
func TestProcessStdioWriterRefused(t *testing.T) {
	u := uv.UvtNewReactor(t)
	for name, opts := range map[string]uv.ProcessOptions{
		"nil writer":  {Stdout: uv.StdioWriter(nil)},
		"stdin":       {Stdin: uv.StdioWriter(&bytes.Buffer{})},
		"nil *File":   {Stderr: uv.StdioWriter((*os.File)(nil))},
		"typed nil *": {Stdout: uv.StdioWriter((*heldBuffer)(nil))},
	} {
		opts.Args = []string{"true"}
		if p, err := uv.StartProcess(u.Reactor, opts); p != nil || !errors.Is(err, syscall.EINVAL) {
			t.Errorf("%s: StartProcess = %v, %v; want EINVAL", name, p, err)
		}
	}
	uv.UvtShutdown(t, u, false)
}

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
