package uv

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
)

// ExecMode is how an Exec treats the command's standard output: the four
// modes of PHP's program execution functions.
type ExecMode uint8

const (
	// ExecLines (PHP's exec): the output is collected as lines, trailing
	// whitespace removed; the result's Last is the last line.
	ExecLines ExecMode = iota
	// ExecSystem (system): the output is passed through to
	// ExecOptions.Out line by line as it comes; Last is the last line.
	ExecSystem
	// ExecPassthru (passthru): the raw output is passed through to
	// ExecOptions.Out as it comes, nothing is kept.
	ExecPassthru
	// ExecShell (shell_exec): the whole output is collected in Output.
	ExecShell
)

var execModeNames = [...]string{"exec", "system", "passthru", "shell_exec"}

// String names the mode as PHP does: "exec", "system", "passthru",
// "shell_exec".
func (m ExecMode) String() string {
	if int(m) < len(execModeNames) {
		return execModeNames[m]
	}
	return "ExecMode(" + strconv.Itoa(int(m)) + ")"
}

// ExecOptions configure an Exec. The zero value runs in ExecLines mode with
// no timeout.
type ExecOptions struct {
	Mode ExecMode
	// Timeout, if not zero, bounds the command: when it runs out the
	// command's process group gets SIGTERM, and SIGKILL Grace later if it
	// is still there. The result then has TimedOut set and the error
	// event.ErrTimeout.
	Timeout time.Duration
	// Grace is the time between SIGTERM and SIGKILL, after a timeout or a
	// Close of a running command; 0 means 2 seconds. The reactor's Close
	// waits for it to run out when the command ignores SIGTERM.
	Grace time.Duration
	// Out receives the output in ExecSystem and ExecPassthru modes; nil
	// means os.Stdout. It is written from a goroutine of its own, never
	// from the loop goroutine.
	Out io.Writer
	// Dir and Env are the command's working directory and environment, as
	// in ProcessOptions.
	Dir string
	Env []string
	// Shell runs the command as Shell -c command; empty means /bin/sh.
	Shell string
}

// ExecResult is what an Exec completes with.
type ExecResult struct {
	Mode ExecMode
	// Lines holds the output lines (ExecLines), trailing whitespace
	// removed from each.
	Lines []string
	// Last is the last line of output without its trailing whitespace
	// (ExecLines, ExecSystem).
	Last string
	// Output is the whole output (ExecShell).
	Output []byte
	// ExitCode is the shell's exit code, or the negative number of the
	// signal that ended it.
	ExitCode int
	// TimedOut says the Timeout ran out and the command was signalled.
	TimedOut bool
}

// An Exec is a shell command run through /bin/sh -c, and the event of its
// end: it completes on the loop goroutine with an *ExecResult, stored and
// replayed to later subscribers. A command that ran out of its Timeout
// completes with the result and event.ErrTimeout.
//
// The command runs in a process group of its own (what it starts is
// signalled with it). Its standard error is this process's, its standard
// input /dev/null. Close (or the last Dispose) of a running Exec, or the
// Close of its reactor, terminates it as Process.Terminate does: SIGTERM to
// the group, and SIGKILL after the grace period if the shell is still
// there or something of the group is still alive; subscribers hear
// ErrClosed. Close returns at once (it may be called on the loop); the
// reactor's Close waits until the shell has been reaped, the output has
// reached its end and no process of the group is alive — so a program
// that closes its reactor and exits leaves none of the command behind.
// Shutdown's context bounds that wait (its error then names the command:
// reactor.ErrCloseIncomplete).
//
// An Exec is a Go-owned event built on Process (see it for how children
// are started and reaped). It is started when created and counts as active
// until it completes.
type Exec struct {
	event.Base
	r    *reactor.Reactor
	cmd  string
	opts ExecOptions
	proc *Process
	out  outcome

	timedOut    atomic.Bool
	terminating atomic.Bool   // terminate signalled the group
	timer       *time.Timer   // the timeout
	drained     chan struct{} // closed when the output reached its end
	gone        chan struct{} // closed when the shell is reaped and the output drained
	closer      reactorCloser
}

type execOps Exec

// NewExec starts cmd on r. An empty command, a negative duration or an
// unknown mode is an error matching syscall.EINVAL; a shell that cannot be
// started is StartProcess's error (fs.ErrNotExist for a path that does not exist).
func NewExec(r *reactor.Reactor, cmd string, opts ExecOptions) (*Exec, error) {
	if err := checkReactor("NewExec", r); err != nil {
		return nil, err
	}
	switch {
	case strings.TrimSpace(cmd) == "":
		return nil, fmt.Errorf("uv: NewExec: empty command: %w", syscall.EINVAL)
	case opts.Timeout < 0 || opts.Grace < 0:
		return nil, fmt.Errorf("uv: NewExec: negative duration: %w", syscall.EINVAL)
	case opts.Mode > ExecShell:
		return nil, fmt.Errorf("uv: NewExec: unknown mode %d: %w", opts.Mode, syscall.EINVAL)
	}
	if opts.Grace == 0 {
		opts.Grace = 2 * time.Second
	}
	if opts.Out == nil {
		opts.Out = os.Stdout
	}
	if opts.Shell == "" {
		opts.Shell = "/bin/sh"
	}
	proc, err := StartProcess(r, ProcessOptions{
		Args: []string{opts.Shell, "-c", cmd}, Dir: opts.Dir, Env: opts.Env,
		Stdout: StdioPipe, Stderr: StdioInherit, Group: true,
	})
	if err != nil {
		return nil, fmt.Errorf("uv: NewExec: %w", err)
	}
	proc.Stop() // the Exec counts as active, not its process as well
	e := &Exec{r: r, cmd: cmd, opts: opts, proc: proc, drained: make(chan struct{}), gone: make(chan struct{})}
	event.Init(&e.Base, (*execOps)(e), true, event.GoOwned|event.ValueResult)
	if err := e.Start(); err != nil {
		proc.signal(syscall.SIGKILL)
		proc.Stdout().Close()
		return nil, fmt.Errorf("uv: NewExec: %w", err)
	}
	if opts.Timeout > 0 {
		e.timer = time.AfterFunc(opts.Timeout, e.expire)
	}
	go e.collect(proc.Stdout())
	return e, nil
}

// Pid returns the shell's process id.
func (e *Exec) Pid() int {
	if e == nil {
		return 0
	}
	return e.proc.Pid()
}

// Terminate ends the command without closing the event: SIGTERM to its
// group, and SIGKILL after the grace period if something of it is still
// there (the escalation of Process.Terminate). It returns at once, from any
// goroutine or the loop; the Exec then completes as usual, with the
// signal as its exit code, and Done is closed once nothing of the command
// is alive — when a replacement may start. Once the command is over it
// returns os.ErrProcessDone.
func (e *Exec) Terminate() error {
	if e == nil || e.proc == nil {
		return fmt.Errorf("uv: Exec.Terminate: %w", event.ErrNilEvent)
	}
	if e.finished() && e.proc.gone() {
		return fmt.Errorf("uv: Exec.Terminate: %w", os.ErrProcessDone)
	}
	e.terminate()
	return nil
}

// Done returns a channel closed once the command is over: the shell
// reaped, its output at its end and, when it was terminated, no process
// of its group alive. It is closed after the event's Close too. Nil for
// an Exec NewExec did not make.
func (e *Exec) Done() <-chan struct{} {
	if e == nil {
		return nil
	}
	return e.gone
}

// expire runs when the timeout runs out: SIGTERM now, SIGKILL after the
// grace period.
func (e *Exec) expire() {
	e.timedOut.Store(true)
	e.terminate()
}

// terminate runs Process.Terminate's escalation on the command's group:
// SIGTERM now, and SIGKILL after the grace period unless by then the shell
// has been reaped, the output has reached its end (no process of the group
// holds it open any more) and no member of the group is left. The
// reactor's Close waits until the shell is reaped and the output drained.
func (e *Exec) terminate() {
	if e.finished() && e.proc.gone() {
		return
	}
	e.terminating.Store(true)
	e.proc.terminate(e.opts.Grace, &termination{
		what: fmt.Sprintf("Exec(pid=%d, %q)", e.proc.Pid(), e.cmd),
		done: e.gone,
		over: func() bool { return e.finished() && e.proc.gone() },
	})
}

// finished reports whether the shell was reaped and the output drained.
func (e *Exec) finished() bool {
	select {
	case <-e.proc.exited:
	default:
		return false
	}
	select {
	case <-e.drained:
		return true
	default:
		return false
	}
}

// collect reads the output to its end (passing it through in the system
// and passthru modes), waits for the shell to be reaped, and completes
// the event with the result.
func (e *Exec) collect(f *os.File) {
	res := &ExecResult{Mode: e.opts.Mode}
	var buf bytes.Buffer
	var last []byte // the system mode's pending partial line
	chunk := make([]byte, 32<<10)
	for {
		n, err := f.Read(chunk)
		data := chunk[:n]
		switch e.opts.Mode {
		case ExecPassthru:
			if n > 0 {
				e.opts.Out.Write(data)
			}
		case ExecSystem:
			last = append(last, data...)
			if i := bytes.LastIndexByte(last, '\n'); i >= 0 {
				e.opts.Out.Write(last[:i+1])
				buf.Reset()
				buf.Write(last[:i+1])
				last = append(last[:0], last[i+1:]...)
			}
		default:
			buf.Write(data)
		}
		if err != nil {
			break
		}
	}
	f.Close()
	close(e.drained)
	if e.opts.Mode == ExecSystem && len(last) > 0 {
		e.opts.Out.Write(last)
		buf.Write(last)
	}
	<-e.proc.exited
	defer func() {
		if e.terminating.Load() {
			<-e.proc.groupDone() // what SIGKILL hit is dead too
		}
		close(e.gone)
	}()
	if e.timer != nil {
		e.timer.Stop()
	}
	code, reaped := e.proc.ExitStatus()
	res.ExitCode = code
	switch e.opts.Mode {
	case ExecLines:
		res.Lines = splitLines(buf.Bytes())
		if len(res.Lines) > 0 {
			res.Last = res.Lines[len(res.Lines)-1]
		}
	case ExecSystem:
		if lines := splitLines(buf.Bytes()); len(lines) > 0 {
			res.Last = lines[len(lines)-1]
		}
	case ExecShell:
		res.Output = bytes.Clone(buf.Bytes())
	}
	var err error
	if e.timedOut.Load() {
		res.TimedOut = true
		err = fmt.Errorf("uv: exec %q: after %v: %w", e.cmd, e.opts.Timeout, event.ErrTimeout)
	}
	if !reaped { // the shell's status was lost (see Process.ExitStatus)
		err = fmt.Errorf("uv: exec %q: exit status lost: %w", e.cmd, syscall.ECHILD)
	}
	e.out.deliver(e.r, &e.Base, res, err, nil)
}

// splitLines splits output into lines, each without its trailing
// whitespace; a last line without a newline counts, the empty piece after
// a final newline does not.
func splitLines(out []byte) []string {
	if len(out) == 0 {
		return nil
	}
	s := strings.TrimSuffix(string(out), "\n")
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t\r\n\v\f")
	}
	return lines
}

func (o *execOps) Owner() event.Owner         { return o.r }
func (o *execOps) Event() event.Event         { return (*Exec)(o) }
func (o *execOps) Arm() error                 { return onReactorClose(&o.closer, o.r, (*Exec)(o)) }
func (o *execOps) Disarm()                    {}
func (o *execOps) Stored() (any, error, bool) { return o.out.stored() }

// Free runs when the event has closed (its own Close, its last Dispose,
// its completion or the reactor's Close): a command still running is
// terminated (SIGTERM, then SIGKILL after the grace period).
func (o *execOps) Free(bool) {
	o.closer.forget()
	if !o.out.done.Load() {
		(*Exec)(o).terminate()
	}
}

func (o *execOps) Describe() string {
	res, _, ok := o.out.stored()
	if !ok {
		return fmt.Sprintf("Exec(mode=%v, pid=%d)", o.opts.Mode, o.proc.Pid())
	}
	return fmt.Sprintf("Exec(mode=%v, pid=%d, exit=%d)", o.opts.Mode, o.proc.Pid(), res.(*ExecResult).ExitCode)
}
