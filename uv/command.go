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
	"github.com/uvevent/uvevent/eventkind"
	"github.com/uvevent/uvevent/reactor"
)

// OutputMode is what a Command does with the command's standard output:
// keep it (as lines or whole) for the result, or copy it to
// CommandOptions.Out as it comes (line by line, keeping the last line, or
// raw, keeping nothing).
type OutputMode uint8

const (
	// CaptureLines keeps the output as lines, trailing whitespace removed
	// from each, in the result's Lines; Last is the last line.
	CaptureLines OutputMode = iota
	// StreamLines copies the output to CommandOptions.Out a whole line at
	// a time as it comes; the result keeps only Last, the last line.
	StreamLines
	// StreamRaw copies the output to CommandOptions.Out as it comes, in
	// the chunks it is read in; the result keeps none of it.
	StreamRaw
	// CaptureAll keeps the whole output, unchanged, in the result's Output.
	CaptureAll
)

var outputModeNames = [...]string{"CaptureLines", "StreamLines", "StreamRaw", "CaptureAll"}

// String returns the mode's Go name ("CaptureLines", ...).
func (m OutputMode) String() string {
	if int(m) < len(outputModeNames) {
		return outputModeNames[m]
	}
	return "OutputMode(" + strconv.Itoa(int(m)) + ")"
}

// CommandOptions configure a Command. The zero value runs in CaptureLines
// mode with no timeout.
type CommandOptions struct {
	// Mode is what becomes of the command's output (see OutputMode).
	Mode OutputMode
	// Timeout, if not zero, bounds the command: when it runs out the
	// command's process group gets SIGTERM, and SIGKILL Grace later if it
	// is still there. The result then has TimedOut set and the error
	// event.ErrTimeout.
	Timeout time.Duration
	// Grace is the time between SIGTERM and SIGKILL, after a timeout or a
	// Close of a running command; 0 means 2 seconds. The reactor's Close
	// waits for it to run out when the command ignores SIGTERM.
	Grace time.Duration
	// Out receives the output in StreamLines and StreamRaw modes; nil
	// means os.Stdout. It is written from a goroutine of its own, never
	// from the loop goroutine.
	Out io.Writer
	// Dir and Env are the command's working directory and environment, as
	// in ProcessOptions.
	Dir string
	Env []string // nil: this process's environment
	// Shell runs the command as Shell -c command; empty means /bin/sh.
	Shell string
}

// CommandResult is what a Command completes with.
type CommandResult struct {
	// Mode is the mode the command ran in, which says which fields below
	// hold its output.
	Mode OutputMode
	// Lines holds the output lines (CaptureLines), trailing whitespace
	// removed from each.
	Lines []string
	// Last is the last line of output without its trailing whitespace
	// (CaptureLines, StreamLines).
	Last string
	// Output is the whole output (CaptureAll).
	Output []byte
	// ExitCode is the shell's exit code, or the negative number of the
	// signal that ended it.
	ExitCode int
	// TimedOut says the Timeout ran out and the command was signalled.
	TimedOut bool
}

// A Command is a shell command run through /bin/sh -c (one line of shell,
// where os/exec.Command takes a program and its arguments), and the event of
// its end: it completes on the loop goroutine with a *CommandResult, stored and
// replayed to later subscribers. A command that ran out of its Timeout
// completes with the result and event.ErrTimeout.
//
// The command runs in a process group of its own (what it starts is
// signalled with it). Its standard error is this process's, its standard
// input /dev/null. Close (or the last Dispose) of a running Command, or the
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
// A Command is a Go-owned event built on Process (see it for how children
// are started and reaped). It is started when created and counts as active
// until it completes.
type Command struct {
	event.Base
	r    *reactor.Reactor
	cmd  string
	opts CommandOptions
	proc *Process
	out  outcome

	timedOut    atomic.Bool
	terminating atomic.Bool   // terminate signalled the group
	timer       *time.Timer   // the timeout
	drained     chan struct{} // closed when the output reached its end
	gone        chan struct{} // closed when the shell is reaped and the output drained
	closer      reactorCloser
}

type commandOps Command

// NewCommand starts cmd on r. An empty command, a negative duration or an
// unknown mode is an error matching syscall.EINVAL; a shell that cannot be
// started is StartProcess's error (fs.ErrNotExist for a path that does not exist).
func NewCommand(r *reactor.Reactor, cmd string, opts CommandOptions) (*Command, error) {
	if err := checkReactor("NewCommand", r); err != nil {
		return nil, err
	}
	switch {
	case strings.TrimSpace(cmd) == "":
		return nil, fmt.Errorf("uv: NewCommand: empty command: %w", syscall.EINVAL)
	case opts.Timeout < 0 || opts.Grace < 0:
		return nil, fmt.Errorf("uv: NewCommand: negative duration: %w", syscall.EINVAL)
	case opts.Mode > CaptureAll:
		return nil, fmt.Errorf("uv: NewCommand: unknown mode %d: %w", opts.Mode, syscall.EINVAL)
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
		return nil, fmt.Errorf("uv: NewCommand: %w", err)
	}
	proc.Stop() // the Command counts as active, not its process as well
	e := &Command{r: r, cmd: cmd, opts: opts, proc: proc, drained: make(chan struct{}), gone: make(chan struct{})}
	eventkind.Init(&e.Base, (*commandOps)(e), true, event.GoOwned|event.ValueResult)
	if err := e.Start(); err != nil {
		proc.signal(syscall.SIGKILL)
		proc.Stdout().Close()
		return nil, fmt.Errorf("uv: NewCommand: %w", err)
	}
	if opts.Timeout > 0 {
		e.timer = time.AfterFunc(opts.Timeout, e.expire)
	}
	go e.collect(proc.Stdout())
	return e, nil
}

// Pid returns the shell's process id.
func (e *Command) Pid() int {
	if e == nil {
		return 0
	}
	return e.proc.Pid()
}

// Terminate ends the command without closing the event: SIGTERM to its
// group, and SIGKILL after the grace period if something of it is still
// there (the escalation of Process.Terminate). It returns at once, from any
// goroutine or the loop; the Command then completes as usual, with the
// signal as its exit code, and Exited is closed once nothing of the command
// is alive — when a replacement may start. Once the command is over it
// returns os.ErrProcessDone.
func (e *Command) Terminate() error {
	if e == nil || e.proc == nil {
		return fmt.Errorf("uv: Command.Terminate: %w", event.ErrNilEvent)
	}
	if e.finished() && e.proc.gone() {
		return fmt.Errorf("uv: Command.Terminate: %w", os.ErrProcessDone)
	}
	e.terminate()
	return nil
}

// Exited returns a channel closed once the command is over: the shell
// reaped, its output at its end and, when it was terminated, no process
// of its group alive. It is closed after the event's Close too. Nil for
// a Command NewCommand did not make.
func (e *Command) Exited() <-chan struct{} {
	if e == nil {
		return nil
	}
	return e.gone
}

// expire runs when the timeout runs out: SIGTERM now, SIGKILL after the
// grace period.
func (e *Command) expire() {
	e.timedOut.Store(true)
	e.terminate()
}

// terminate runs Process.Terminate's escalation on the command's group:
// SIGTERM now, and SIGKILL after the grace period unless by then the shell
// has been reaped, the output has reached its end (no process of the group
// holds it open any more) and no member of the group is left. The
// reactor's Close waits until the shell is reaped and the output drained.
func (e *Command) terminate() {
	if e.finished() && e.proc.gone() {
		return
	}
	e.terminating.Store(true)
	e.proc.terminate(e.opts.Grace, &termination{
		what: func() string { return fmt.Sprintf("Command(pid=%d, %q)", e.proc.Pid(), e.cmd) },
		done: e.gone,
		over: func() bool { return e.finished() && e.proc.gone() },
	})
}

// finished reports whether the shell was reaped and the output drained.
func (e *Command) finished() bool {
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

// collect reads the output to its end (copying it to Out in the streaming
// modes), waits for the shell to be reaped, and completes the event with
// the result.
func (e *Command) collect(f *os.File) {
	res := &CommandResult{Mode: e.opts.Mode}
	var buf bytes.Buffer
	var last []byte // StreamLines: the pending partial line
	chunk := make([]byte, 32<<10)
	for {
		n, err := f.Read(chunk)
		data := chunk[:n]
		switch e.opts.Mode {
		case StreamRaw:
			if n > 0 {
				e.opts.Out.Write(data)
			}
		case StreamLines:
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
	if e.opts.Mode == StreamLines && len(last) > 0 {
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
	case CaptureLines:
		res.Lines = splitLines(buf.Bytes())
		if len(res.Lines) > 0 {
			res.Last = res.Lines[len(res.Lines)-1]
		}
	case StreamLines:
		if lines := splitLines(buf.Bytes()); len(lines) > 0 {
			res.Last = lines[len(lines)-1]
		}
	case CaptureAll:
		res.Output = bytes.Clone(buf.Bytes())
	}
	var err error
	if e.timedOut.Load() {
		res.TimedOut = true
		err = fmt.Errorf("uv: command %q: after %v: %w", e.cmd, e.opts.Timeout, event.ErrTimeout)
	}
	if !reaped { // the shell's status was lost (see Process.ExitStatus)
		err = fmt.Errorf("uv: command %q: exit status lost: %w", e.cmd, syscall.ECHILD)
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

func (o *commandOps) Owner() event.Owner         { return o.r.Owner() }
func (o *commandOps) Event() event.Event         { return (*Command)(o) }
func (o *commandOps) Arm() error                 { return onReactorClose(&o.closer, o.r, (*Command)(o)) }
func (o *commandOps) Disarm()                    {}
func (o *commandOps) Stored() (any, error, bool) { return o.out.stored() }

// Free runs when the event has closed (its own Close, its last Dispose,
// its completion or the reactor's Close): a command still running is
// terminated (SIGTERM, then SIGKILL after the grace period). One that is
// over (the shell reaped, the output at its end) is not, whether or not
// its completion has reached the loop yet: what the shell left in its
// group runs on, as after the completion.
func (o *commandOps) Free(bool) {
	o.closer.forget()
	if e := (*Command)(o); !o.out.done.Load() && !e.finished() {
		e.terminate()
	}
}

func (o *commandOps) Describe() string {
	res, _, ok := o.out.stored()
	if !ok {
		return fmt.Sprintf("Command(mode=%v, pid=%d)", o.opts.Mode, o.proc.Pid())
	}
	return fmt.Sprintf("Command(mode=%v, pid=%d, exit=%d)", o.opts.Mode, o.proc.Pid(), res.(*CommandResult).ExitCode)
}

// Close closes a running command's event and terminates the command as
// Process.Terminate does: SIGTERM to its process group, SIGKILL after the
// grace period. It returns at once; the reactor's Close waits until the
// group is gone. Subscribers hear event.ErrClosed. Closing a completed or
// closed Command does nothing and returns nil; nor does closing one that
// is over (the shell reaped and its output at its end) but whose
// completion has not reached the loop yet signal anything.
func (e *Command) Close() error {
	return e.Base.Close()
}
