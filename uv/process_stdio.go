package uv

import (
	"fmt"
	"io"
	"os"
	"reflect"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/reactor"
)

// Stdio says what a child's standard stream is connected to. The zero
// value is StdioIgnore.
type Stdio struct {
	mode stdioMode
	file *os.File
	w    io.Writer
}

type stdioMode uint8

const (
	stdioIgnore stdioMode = iota
	stdioInherit
	stdioPipe
	stdioFile
	stdioLoop
	stdioWriter
)

var (
	// StdioIgnore connects the stream to /dev/null (libuv's UV_IGNORE, os/exec's
	// nil).
	StdioIgnore = Stdio{}
	// StdioInherit gives the child this process's stream of the same number.
	StdioInherit = Stdio{mode: stdioInherit}
	// StdioPipe connects the stream to a new pipe; Process.Stdin, Stdout or
	// Stderr return the parent's end, an *os.File for goroutines.
	StdioPipe = Stdio{mode: stdioPipe}
	// StdioLoop connects the stream to a new pipe whose parent end is a
	// stream on the child's reactor (libuv's UV_CREATE_PIPE):
	// Process.StdinIO, StdoutIO or StderrIO return it as an *IO, to read
	// with callbacks on the loop (ReadLines splits it into lines), with
	// ReadAsync, or from a goroutine with Read. The IO is the caller's: it
	// is not closed with the Process (the child may outlive its event);
	// close it when done, or drop it (see Lifetime in the package doc).
	// The Process completes after the output's end has been given to its
	// reader (a callback's io.EOF, a Read's) or the IO closed, as with
	// StdioWriter, for OutputWait after the child's exit at most.
	StdioLoop = Stdio{mode: stdioLoop}
)

// StdioFile connects the stream to f (the child gets a duplicate; f stays
// open in the parent). A nil f is an error of StartProcess matching
// syscall.EINVAL; an f closed by then, one matching os.ErrClosed and
// syscall.EBADF (its descriptor would otherwise read as -1, which fork and
// exec take as "close this stream").
func StdioFile(f *os.File) Stdio { return Stdio{mode: stdioFile, file: f} }

// StdioWriter sends the child's output (Stdout or Stderr) to w, as os/exec
// does with Cmd.Stdout = w: the stream is a pipe whose output a goroutine
// of its own (never the loop's) copies to w, and the Process completes
// (its event, Done, ExitStatus) only once that copy is over, as Cmd.Wait
// returns: no output comes after the completion. An *os.File is given to
// the child as StdioFile gives it, with no copy. The same w for Stdout and
// Stderr (w == w) is one pipe: the two arrive in the order written, from
// one goroutine. A failed Write ends the copy (the child then writes to a
// closed pipe) and the completion's error matches it, unless the child's
// end gave one already. Something the child started that keeps the stream
// open (a command left in the background) holds the completion back for
// OutputWait after the child's exit at most: the stream is then closed and
// the completion's error matches exec.ErrWaitDelay, naming who held it
// (as Cmd.WaitDelay does). A nil w (or a nil pointer in it), or
// StdioWriter as Stdin, is an error of StartProcess matching
// syscall.EINVAL.
func StdioWriter(w io.Writer) Stdio {
	if f, ok := w.(*os.File); ok && f != nil {
		return StdioFile(f)
	}
	return Stdio{mode: stdioWriter, w: w}
}

// nilWriter reports a nil w, or a nil pointer (map, func, ...) in it.
func nilWriter(w io.Writer) bool {
	if w == nil {
		return true
	}
	switch v := reflect.ValueOf(w); v.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Func, reflect.Chan, reflect.Slice, reflect.Interface:
		return v.IsNil()
	}
	return false
}

// sameWriter reports whether a and b are one writer (== on comparable
// types, as os/exec compares Stdout and Stderr).
func sameWriter(a, b io.Writer) bool {
	ta := reflect.TypeOf(a)
	return ta != nil && ta == reflect.TypeOf(b) && ta.Comparable() && a == b
}

// outputCopy is a StdioWriter stream: the parent's end of its pipe, the
// writer it is copied to, and its record among the child's outputs.
type outputCopy struct {
	from *os.File
	to   io.Writer
	out  *childOutput
}

// startCopies starts copying each StdioWriter stream to its writer
// (outputCopy.run); each copy ends its output when over, and the first
// failure is kept.
func (p *Process) startCopies(copies []outputCopy) {
	for _, c := range copies {
		go func() {
			defer c.out.ended()
			if err := c.run(); err != nil {
				p.copyErr.CompareAndSwap(nil, &err)
			}
		}()
	}
}

// copyError returns the first copy's failure, nil if none; call it once
// the copies are over.
func (p *Process) copyError() error {
	if e := p.copyErr.Load(); e != nil {
		return fmt.Errorf("uv: process %d: copying its output: %w", p.pid, *e)
	}
	return nil
}

// stdioSetup opens what the three standard streams of a child need, and
// closes the child's ends after the fork.
type stdioSetup struct {
	parent  [3]*os.File    // the parent's pipe ends, given to the Process
	loop    [3]*IO         // the parent's ends of StdioLoop streams
	copies  []outputCopy   // the StdioWriter streams, copied by the Process
	outputs []*childOutput // the output pipes (StdioWriter, StdioLoop) whose end the Process waits for
	child   []*os.File     // closed after the fork
	ipc     *IPC           // the parent's end of the IPC pipe (ipc_process.go)
}

func (s *stdioSetup) open(r *reactor.Reactor, streams [3]Stdio) ([3]uintptr, error) {
	var files [3]uintptr
	for i, st := range streams {
		switch st.mode {
		case stdioInherit:
			files[i] = uintptr(i)
		case stdioFile:
			if st.file == nil {
				s.closeParentEnds()
				return files, fmt.Errorf("stream %d: nil file: %w", i, syscall.EINVAL)
			}
			fd := st.file.Fd()
			if fd == ^uintptr(0) {
				s.closeParentEnds()
				return files, fmt.Errorf("stream %d: file %s: %w (%w)", i, st.file.Name(), os.ErrClosed, syscall.EBADF)
			}
			files[i] = fd
		case stdioPipe:
			rd, wr, err := os.Pipe()
			if err != nil {
				s.closeParentEnds()
				return files, err
			}
			mine, theirs := wr, rd
			if i > 0 {
				mine, theirs = rd, wr
			}
			s.parent[i] = mine
			s.child = append(s.child, theirs)
			files[i] = theirs.Fd()
		case stdioLoop:
			fd, err := s.openLoop(r, i)
			if err != nil {
				s.closeParentEnds()
				return files, err
			}
			files[i] = fd
		case stdioWriter:
			switch {
			case i == 0 || nilWriter(st.w):
				s.closeParentEnds()
				return files, fmt.Errorf("stream %d: a writer takes output (Stdout, Stderr), not nil: %w", i, syscall.EINVAL)
			case i == 2 && streams[1].mode == stdioWriter && sameWriter(st.w, streams[1].w):
				files[2] = files[1] // one pipe, as os/exec makes
				s.outputs[len(s.outputs)-1].name = "stdout and stderr"
				continue
			}
			rd, wr, err := os.Pipe()
			if err != nil {
				s.closeParentEnds()
				return files, err
			}
			out := newChildOutput(i, pipeInode(int(wr.Fd())))
			out.from = rd
			s.outputs = append(s.outputs, out)
			s.copies = append(s.copies, outputCopy{from: rd, to: st.w, out: out})
			s.child = append(s.child, wr)
			files[i] = wr.Fd()
		default:
			f, err := devNull()
			if err != nil {
				s.closeParentEnds()
				return files, err
			}
			files[i] = f.Fd()
		}
	}
	return files, nil
}

// openLoop makes the pipe of stream i for StdioLoop: the parent's end
// becomes an IO on r (which owns the descriptor), the child's end is
// returned and closed after the fork.
func (s *stdioSetup) openLoop(r *reactor.Reactor, i int) (uintptr, error) {
	var p [2]int
	if err := pipeCloexec(&p); err != nil {
		return 0, os.NewSyscallError("pipe2", err)
	}
	mine, theirs := p[1], p[0]
	if i > 0 {
		mine, theirs = p[0], p[1]
	}
	c, err := OpenPipe(r, mine)
	if err != nil {
		unix.Close(mine)
		unix.Close(theirs)
		return 0, fmt.Errorf("stream %d: %w", i, err)
	}
	s.loop[i] = c
	if i > 0 {
		out := newChildOutput(i, pipeInode(theirs))
		c.e.extra().outEnd = out
		s.outputs = append(s.outputs, out)
	}
	child := os.NewFile(uintptr(theirs), "|child")
	s.child = append(s.child, child)
	return child.Fd(), nil
}

// devNull returns /dev/null opened for reading and writing, once for the
// process: every ignored stream of every child is a duplicate of it, which
// saves an open and a close per stream and spawn.
var devNull = sync.OnceValues(func() (*os.File, error) { return os.OpenFile(os.DevNull, os.O_RDWR, 0) })

func (s *stdioSetup) closeChildEnds() {
	for _, f := range s.child {
		f.Close()
	}
}

func (s *stdioSetup) closeParentEnds() {
	for _, c := range s.copies {
		c.from.Close()
	}
	s.copies = nil
	for i, f := range s.parent {
		if f != nil {
			f.Close()
			s.parent[i] = nil
		}
	}
	for i, c := range s.loop {
		if c != nil {
			c.Close()
			s.loop[i] = nil
		}
	}
	if s.ipc != nil {
		s.ipc.Close()
		s.ipc = nil
	}
}

// StdinIO returns the parent's (write) end of the child's standard input
// when it is StdioLoop, else nil. The caller closes it (the child sees the
// end of its input then).
func (p *Process) StdinIO() *IO {
	if p == nil {
		return nil
	}
	return p.loopIO[0]
}

// StdoutIO returns the parent's (read) end of the child's standard output
// when it is StdioLoop, else nil: a stream on the child's reactor. The
// caller closes it.
func (p *Process) StdoutIO() *IO {
	if p == nil {
		return nil
	}
	return p.loopIO[1]
}

// StderrIO returns the parent's (read) end of the child's standard error
// when it is StdioLoop, else nil. The caller closes it.
func (p *Process) StderrIO() *IO {
	if p == nil {
		return nil
	}
	return p.loopIO[2]
}
