package uv

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// OutputWait bounds how long a Process waits, after its child has been
// reaped, for the end of the child's output (StdioWriter and StdioLoop
// streams): a process the child started in the background may hold the
// pipe open for as long as it runs (sh -c 'daemon & echo started'). Past
// it a StdioWriter stream is closed, what the child's followers write to
// it later is lost, and the Process completes with an error matching
// exec.ErrWaitDelay that names the processes holding the pipe; a
// StdioLoop stream, the caller's, is left open, and the completion comes
// before its end. Cmd.WaitDelay does the same for os/exec.
const OutputWait = time.Second

// outputWait is OutputWait, which tests of the package may change.
var outputWait = OutputWait

// A childOutput is one output pipe of a child (stdout, stderr, or both
// when they share one) whose end the Process waits for after the exit.
type childOutput struct {
	name string        // "stdout", "stderr", "stdout and stderr"
	ino  uint64        // the pipe's inode: who else holds it is found by it
	done chan struct{} // closed once the output reached its end, or was cut
	once sync.Once

	// StdioWriter: the parent's end, and, once the copy cut it past the
	// bound, who held it then (written before done is closed).
	from   *os.File
	heldBy string
	cut    bool
}

func newChildOutput(stream int, ino uint64) *childOutput {
	return &childOutput{name: [3]string{"stdin", "stdout", "stderr"}[stream], ino: ino, done: make(chan struct{})}
}

// ended records that the output reached its end: the copy is over
// (StdioWriter), or the IO's reader was given its end or the IO closed
// (StdioLoop). Safe from any goroutine, more than once.
func (o *childOutput) ended() { o.once.Do(func() { close(o.done) }) }

func (o *childOutput) over() bool {
	select {
	case <-o.done:
		return true
	default:
		return false
	}
}

// pipeInode returns the inode of the pipe fd is an end of (0 if fstat
// fails: nobody is named then).
func pipeInode(fd int) uint64 {
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		return 0
	}
	return st.Ino
}

// copyOutput copies a StdioWriter stream to its writer until its end, or
// until the read deadline the Process sets at the child's exit (OutputWait
// later): then it takes what the pipe holds at that moment, without
// waiting, and if the end is still not there, cuts the stream, naming who
// holds it. A failed Write ends it with that error.
func (c outputCopy) run() error {
	defer c.from.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := c.from.Read(buf)
		if n > 0 {
			if _, werr := c.to.Write(buf[:n]); werr != nil {
				return werr
			}
		}
		switch {
		case err == io.EOF:
			return nil
		case errors.Is(err, os.ErrDeadlineExceeded):
			return c.drain(buf)
		case err != nil:
			return err
		}
	}
}

// drain copies what the pipe holds now, past the bound, and cuts the
// stream if that is not its end.
func (c outputCopy) drain(buf []byte) error {
	rc, err := c.from.SyscallConn()
	if err != nil {
		return err
	}
	for {
		var n int
		var rerr error
		if err := rc.Control(func(fd uintptr) {
			n, rerr = ignoringEINTR(func() (int, error) { return unix.Read(int(fd), buf) })
		}); err != nil {
			return err
		}
		switch {
		case n > 0:
			if _, werr := c.to.Write(buf[:n]); werr != nil {
				return werr
			}
		case rerr == nil: // the end came after all
			return nil
		case rerr == unix.EAGAIN: // still open: held by a process the child started
			c.out.heldBy, c.out.cut = heldBy(c.out.ino), true
			return nil
		default:
			return os.NewSyscallError("read", rerr)
		}
	}
}

// awaitOutput waits, once the child has been reaped, for the end of its
// output, for OutputWait at most: the StdioWriter copies get it as their
// read deadline (they end by themselves then), a StdioLoop stream is
// waited for until then. It returns the error naming the streams cut.
func (p *Process) awaitOutput() error {
	if len(p.outputs) == 0 {
		return nil
	}
	deadline := time.Now().Add(outputWait)
	for _, o := range p.outputs {
		if o.from != nil {
			o.from.SetReadDeadline(deadline) // fails only once the copy closed it: over
		}
	}
	bound := time.NewTimer(outputWait)
	defer bound.Stop()
	late := false
	for _, o := range p.outputs {
		if o.from != nil || late {
			continue
		}
		select {
		case <-o.done:
		case <-bound.C:
			late = true // the exit comes before the end of the reader's stream
		}
	}
	var cut []string
	for _, o := range p.outputs {
		if o.from != nil {
			<-o.done
			if o.cut {
				cut = append(cut, o.name+o.heldBy)
			}
		}
	}
	if len(cut) == 0 {
		return nil
	}
	return fmt.Errorf("uv: process %d: output still open %v after its exit, closed: %s: %w",
		p.pid, outputWait, strings.Join(cut, ", "), exec.ErrWaitDelay)
}

// openOutputs names the output pipes not at their end yet, with who holds
// them, for a Process reaped but not complete.
func (p *Process) openOutputs() []string {
	var open []string
	for _, o := range p.outputs {
		if !o.over() {
			open = append(open, o.name+heldBy(o.ino))
		}
	}
	return open
}

// lingerName names a Process the reactor's Close waits for: running, or
// reaped with its output still open, and who holds it then.
func (p *Process) lingerName() string {
	name := fmt.Sprintf("Process(pid=%d, %s)", p.pid, p.path)
	p.mu.Lock()
	reaped := p.reaped
	p.mu.Unlock()
	if !reaped {
		return name + " running"
	}
	if open := p.openOutputs(); len(open) > 0 {
		return fmt.Sprintf("%s reaped, reading its output (for %v after the exit at most): %s", name, outputWait, strings.Join(open, ", "))
	}
	return name + " reaped"
}

// heldBy names the processes other than this one that hold the pipe of
// inode ino open, as " held by pid 12 (sleep)", or "" when none is found
// (no /proc, no permission, or the inode unknown).
func heldBy(ino uint64) string {
	if ino == 0 {
		return ""
	}
	holders := pipeHolders(ino, 4)
	if len(holders) == 0 {
		return ""
	}
	return " held by " + strings.Join(holders, ", ")
}

// pipeHolders returns up to max processes, other than this one, with a
// descriptor on the pipe of inode ino, as "pid 12 (sleep)".
func pipeHolders(ino uint64, max int) []string {
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	link := "pipe:[" + strconv.FormatUint(ino, 10) + "]"
	self := os.Getpid()
	var found []string
	for _, d := range procs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil || pid == self {
			continue
		}
		if holdsLink("/proc/"+d.Name()+"/fd", link) {
			comm, _ := os.ReadFile("/proc/" + d.Name() + "/comm")
			found = append(found, fmt.Sprintf("pid %d (%s)", pid, strings.TrimSpace(string(comm))))
			if len(found) == max {
				break
			}
		}
	}
	return found
}

// holdsLink reports whether a descriptor in dir (a /proc/PID/fd) links to link.
func holdsLink(dir, link string) bool {
	fds, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, fd := range fds {
		if l, err := os.Readlink(dir + "/" + fd.Name()); err == nil && l == link {
			return true
		}
	}
	return false
}
