package uv_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/uv"
)

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
