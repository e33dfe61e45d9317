package uv_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/uvevent/uvevent/event"
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
