package uv

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/eventkind"
	"github.com/uvevent/uvevent/internal/kind"
	"github.com/uvevent/uvevent/reactor"
)

// A Process is a child process and the event of its end: it completes, on
// the loop goroutine, with the child's exit code, or with the negative
// number of the signal that killed it (-9 for SIGKILL), once the child has
// been reaped — it is gone, and its pid is free for reuse (a restart on
// the same port can go ahead) — and the output of its StdioWriter streams
// has all been copied and that of its StdioLoop streams read to its end
// (for OutputWait after the exit at most: see StdioWriter). It stores that result and replays it to
// subscribers that come later (event.Await on a finished Process returns
// at once). Exited gives the same moment to any goroutine, even after Close.
//
// Children are started with syscall.ForkExec (what os/exec uses, under the
// same fork lock) and watched through a pidfd; they are reaped with wait4
// on their own pid, so uv.Process never installs a SIGCHLD handler and
// never reaps another child: os/exec used elsewhere in the program keeps
// working (see docs/signals.md). One goroutine for the whole program, the
// reaper, waits in Go's netpoller on an epoll set of every child's pidfd:
// a waiting child costs an entry in that set, not a goroutine or an OS
// thread. The reaper needs no loop: a child is reaped, and Exited closed,
// while the loop is blocked in a callback or no goroutine runs it.
//
// StartProcess returns the event started: while the child runs it counts as
// active, so the reactor's Run does not end before it. Called from another
// goroutine while the loop runs, it queues the Start to the loop, as
// Reactor.Post queues, and returns without waiting for it (a Process method
// the same goroutine calls next, while the loop runs, comes after it).
// Stop makes the child no longer count (its end is still delivered);
// Start counts it again.
//
// Close (or the last Dispose, or the reactor's Close) ends the event for
// its subscribers with ErrClosed. It does not kill the child unless
// ProcessOptions.KillOnClose says so: the child runs on, the reaper still
// reaps it when it ends (no zombie is left), and
// ExitStatus gives its result then, and Exited is closed (Replay gives
// the result too, while the reactor is open). With KillOnClose, Close
// terminates the child as Terminate does, and the reactor's Close waits
// until it has been reaped and its output is over (OutputWait at most
// after the exit, whatever the child left running holds it). To end a child and learn when it is gone
// without closing the event, call Terminate (or Kill) and wait for the
// event's completion.
//
// The parent's ends of piped standard streams (Stdin, Stdout, Stderr, and
// the IOs of StdioLoop streams) belong to the caller, who closes them;
// those of StdioWriter streams are the Process's, closed when copied.
type Process struct {
	event.Base
	r    *reactor.Reactor
	pid  int
	path string
	out  outcome

	stdin, stdout, stderr *os.File // parent's pipe ends, or nil
	loopIO                [3]*IO   // parent's ends of StdioLoop streams, or nil
	ipc                   *IPC     // parent's end of the IPC pipe, or nil

	grace       time.Duration // between SIGTERM and SIGKILL (Context, KillOnClose)
	killOnClose bool
	ctxStop     func() bool // stops the Context's AfterFunc

	mu        sync.Mutex // held while reaping, so that Kill never signals a reused pid
	reaped    bool
	cancelled error         // the Context's error, when it ended the child (under mu)
	exited    chan struct{} // closed once reaped and status is set
	status    int           // exit code or -signal; read only after exited is closed
	lost      bool          // the status was lost: someone else reaped the child
	group     bool          // the child leads its own process group (Group, Detached)
	closer    reactorCloser

	outputs []*childOutput        // the output pipes whose end the completion waits for
	copyErr atomic.Pointer[error] // the first StdioWriter copy's failure
}

type processOps Process

// ProcessOptions describe a child to spawn.
type ProcessOptions struct {
	// Args is the argument vector, Args[0] included. It must not be empty.
	Args []string
	// Path is the program; if empty, Args[0]. A name without a slash is
	// looked up in PATH (exec.LookPath).
	Path string
	// Env is the environment, "KEY=value" strings; nil means os.Environ().
	Env []string
	// Dir is the working directory; empty means this process's.
	Dir string
	// Stdin, Stdout and Stderr connect the standard streams.
	Stdin, Stdout, Stderr Stdio
	// Detached starts the child in a new session (setsid), away from this
	// process's terminal and process group: it outlives this process's
	// terminal signals. It leads a process group of its own too, as with
	// Group.
	Detached bool
	// Group starts the child in a new process group of its own (setpgid),
	// whose id is its pid: KillGroup and Terminate then signal the child
	// and whatever it started (a shell's commands) together.
	Group bool
	// Credential runs the child as another user and group; that needs the
	// privilege to (EPERM otherwise).
	Credential *syscall.Credential
	// SysProcAttr, if not nil, is the base of the attributes given to
	// fork and exec: what the fields above do not set passes through
	// (Pdeathsig, Noctty, Setctty and Ctty, Foreground, Cloneflags, Chroot,
	// UidMappings, ...). Detached sets Setsid, Group sets Setpgid, and a
	// Credential here replaces its Credential. PidFD must be nil: the
	// Process watches the child through a pidfd of its own (EINVAL
	// otherwise).
	SysProcAttr *syscall.SysProcAttr
	// Context, if not nil, ends the child when it is done: Terminate with
	// Grace. StartProcess refuses a Context already done, with its error.
	// A child so ended completes the event with its status (the signal)
	// and an error matching the Context's.
	Context context.Context
	// KillOnClose makes Close (and the last Dispose, the collector's
	// close and the reactor's Close) terminate a child still running, as
	// Terminate with Grace does; the reactor's Close then waits until the
	// child has been reaped. A child that ended by itself is not one, also
	// when the Close comes before its completion reached the loop: nothing
	// is signalled, not even what it left in its group.
	KillOnClose bool
	// Grace is the time between SIGTERM and SIGKILL when Context ends or
	// KillOnClose applies; 0 sends SIGKILL at once. It must not be
	// negative (EINVAL).
	Grace time.Duration
	// IPC gives the child an IPC pipe at descriptor IPCFD (3), which it
	// opens with OpenIPC; Process.IPC returns the parent's end, to pass
	// connections and listeners to the child (see IPC).
	IPC bool
}

// StartProcess starts a child on r and returns its started Process event. A
// program that does not exist is an error matching fs.ErrNotExist (a path)
// or exec.ErrNotFound (a name looked up in PATH); an empty argument vector,
// a negative Grace or a SysProcAttr with a PidFD is an error matching
// syscall.EINVAL; a Context already done, its error; other failures of
// fork and exec come back as the syscall.Errno they are. From another
// goroutine while the loop runs, the event's Start is queued to the loop:
// should the reactor's Close come before it runs, the child is killed and
// the event closed, though StartProcess returned it.
func StartProcess(r *reactor.Reactor, opts ProcessOptions) (*Process, error) {
	if err := checkReactor("StartProcess", r); err != nil {
		return nil, err
	}
	switch {
	case len(opts.Args) == 0:
		return nil, fmt.Errorf("uv: StartProcess: empty Args: %w", syscall.EINVAL)
	case opts.Grace < 0:
		return nil, fmt.Errorf("uv: StartProcess: negative Grace: %w", syscall.EINVAL)
	}
	if err := checkSysProcAttr(opts.SysProcAttr); err != nil {
		return nil, err
	}
	if opts.Context != nil {
		if err := opts.Context.Err(); err != nil {
			return nil, fmt.Errorf("uv: StartProcess: %w", err)
		}
	}
	path := opts.Path
	if path == "" {
		path = opts.Args[0]
	}
	if !strings.Contains(path, "/") {
		lp, err := exec.LookPath(path)
		if err != nil {
			return nil, fmt.Errorf("uv: StartProcess: %w", err)
		}
		path = lp
	}
	env := opts.Env
	if env == nil {
		env = os.Environ()
	}
	p := &Process{r: r, path: path, exited: make(chan struct{}), grace: opts.Grace, killOnClose: opts.KillOnClose}
	var sio stdioSetup
	defer sio.closeChildEnds()
	files, err := sio.open(r, [3]Stdio{opts.Stdin, opts.Stdout, opts.Stderr})
	if err != nil {
		return nil, fmt.Errorf("uv: StartProcess %s: %w", path, err)
	}
	childFiles := files[:]
	if opts.IPC {
		fd, err := sio.openIPC(r)
		if err != nil {
			sio.closeParentEnds()
			return nil, fmt.Errorf("uv: StartProcess %s: %w", path, err)
		}
		childFiles = append(childFiles, fd)
	}
	pidfd := -1
	sys := sysProcAttr(opts, &pidfd)
	p.group = sys.Setsid || sys.Setpgid && sys.Pgid == 0
	attr := &syscall.ProcAttr{Dir: opts.Dir, Env: env, Files: childFiles, Sys: sys}
	pid, err := syscall.ForkExec(path, opts.Args, attr)
	runtime.KeepAlive(opts)
	if err != nil {
		sio.closeParentEnds()
		return nil, fmt.Errorf("uv: StartProcess %s: %w", path, err)
	}
	p.pid = pid
	p.stdin, p.stdout, p.stderr = sio.parent[0], sio.parent[1], sio.parent[2]
	p.loopIO = sio.loop
	p.outputs = sio.outputs
	p.ipc = sio.ipc
	p.startCopies(sio.copies)
	eventkind.Init(&p.Base, (*processOps)(p), true, event.GoOwned)
	children.add(r, p)
	if opts.Context != nil {
		ctx := opts.Context
		p.ctxStop = context.AfterFunc(ctx, func() { p.contextDone(ctx) })
	}
	serr := p.startEvent()
	// After the Start is queued: the completion the reaper posts comes
	// after it on the loop.
	if pidfd < 0 || !reapLater(p, pidfd) {
		go p.watch(pidfd)
	}
	if serr != nil { // the reactor is closed: the child must not run unwatched
		if p.ctxStop != nil {
			p.ctxStop()
		}
		p.signal(syscall.SIGKILL)
		sio.closeParentEnds()
		return nil, fmt.Errorf("uv: StartProcess %s: %w", path, serr)
	}
	return p, nil
}

// startEvent starts the event of a child just spawned: at once on the loop
// goroutine, or in the caller with ownership when no goroutine runs the
// loop (as Reactor.Post runs it); from another goroutine while the loop
// runs, queued to the loop without waiting for it, a spawn's one hand-over
// to the loop instead of a round trip (Call). Its error, the reactor's
// Close having begun, is StartProcess's when the Start ran before
// startEvent returned; a queued Start that fails later kills the child
// and closes the event, as StartProcess does when the Start fails before
// it returns: a child whose event never started is never left running
// unwatched by the program.
func (p *Process) startEvent() error {
	if p.r.Owner().Owned() {
		return p.Start()
	}
	// 0: the Start pending; 1: startEvent has returned; 2: the Start
	// failed before that, its error in serr.
	var state atomic.Int32
	var serr error
	if err := p.r.Post(func() {
		err := p.Start()
		if err == nil {
			return
		}
		serr = err // read by startEvent only when the swap to 2 comes first
		if state.CompareAndSwap(0, 2) {
			return
		}
		p.signal(syscall.SIGKILL)
		p.Close()
	}); err != nil {
		return err
	}
	if !state.CompareAndSwap(0, 1) {
		return serr
	}
	return nil
}

// sysProcAttr makes the attributes of fork and exec from opts.
func sysProcAttr(opts ProcessOptions, pidfd *int) *syscall.SysProcAttr {
	sys := &syscall.SysProcAttr{}
	if opts.SysProcAttr != nil {
		*sys = *opts.SysProcAttr
	}
	setPidFD(sys, pidfd)
	if opts.Detached {
		sys.Setsid = true
	}
	if opts.Group {
		sys.Setpgid, sys.Pgid = true, 0
	}
	if sys.Setsid && sys.Pgid == 0 {
		// A session leader leads its own group already, and setpgid
		// after setsid would fail (EPERM).
		sys.Setpgid = false
	}
	if opts.Credential != nil {
		sys.Credential = opts.Credential
	}
	return sys
}

// LookupProcess returns the running child pid spawned on r: the same
// *Process that StartProcess returned, so two events for one pid are one event.
// A pid that is not a running child spawned on r is an error matching
// syscall.ECHILD (a finished child is forgotten: its pid may be reused).
func LookupProcess(r *reactor.Reactor, pid int) (*Process, error) {
	if err := reactorMade("LookupProcess", r); err != nil {
		return nil, err
	}
	if p := children.get(r, pid); p != nil {
		return p, nil
	}
	return nil, fmt.Errorf("uv: LookupProcess(%d): not a running child of this reactor: %w", pid, syscall.ECHILD)
}

// Pid returns the child's process id.
func (p *Process) Pid() int {
	if p == nil {
		return 0
	}
	return p.pid
}

// Stdin returns the parent's (write) end of the child's standard input
// when it is a StdioPipe, else nil. The caller closes it.
func (p *Process) Stdin() *os.File {
	if p == nil {
		return nil
	}
	return p.stdin
}

// Stdout returns the parent's (read) end of the child's standard output
// when it is a StdioPipe, else nil. The caller closes it.
func (p *Process) Stdout() *os.File {
	if p == nil {
		return nil
	}
	return p.stdout
}

// Stderr returns the parent's (read) end of the child's standard error
// when it is a StdioPipe, else nil. The caller closes it.
func (p *Process) Stderr() *os.File {
	if p == nil {
		return nil
	}
	return p.stderr
}

// ExitStatus returns the child's result once it has been reaped: its exit
// code, or the negative number of the signal that killed it. ok is false
// while the child runs, and when its status was lost because something
// else in the program reaped it (a wait for any child); the event then
// completes with an error matching syscall.ECHILD.
func (p *Process) ExitStatus() (status int, ok bool) {
	if p == nil {
		return 0, false
	}
	select {
	case <-p.exited:
		return p.status, !p.lost
	default:
		return 0, false
	}
}

// Kill sends sig to the child. Signal 0 only checks that it runs. Once the
// child has been reaped it returns os.ErrProcessDone; a number that is not
// a signal is an error matching syscall.EINVAL. Safe from any goroutine.
func (p *Process) Kill(sig syscall.Signal) error {
	if sig < 0 || sig > 64 {
		return fmt.Errorf("uv: Process.Kill(%d): not a signal number: %w", int(sig), syscall.EINVAL)
	}
	if p == nil || p.pid <= 0 {
		// A zero Process: kill(0, sig) would signal the caller's own group.
		return fmt.Errorf("uv: Process.Kill: not a started process: %w", event.ErrNilEvent)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.reaped {
		return os.ErrProcessDone
	}
	// Not reaped, so the pid is still this child's (a zombie keeps it).
	if err := syscall.Kill(p.pid, sig); err != nil {
		return fmt.Errorf("uv: Process.Kill(%d): %w", int(sig), err)
	}
	return nil
}

// watch waits for the child to end and delivers its status, in a
// goroutine of its own: for a child the reaper could not take (no pidfd on
// an old kernel, or no epoll set to be had), and for the rare one the
// reaper found ended but not yet waitable. With a pidfd it parks in the
// netpoller until the pidfd is readable; without one it blocks in waitid
// without reaping. Either way it reaps with wait4 under mu.
func (p *Process) watch(pidfd int) {
	if pidfd < 0 || !waitPidfd(pidfd) {
		waitExited(p.pid)
	}
	ws, err, cause, _ := p.reap(0)
	p.settle(ws, err, cause, false)
}

// reap reaps the child with wait4 on its pid under mu (so that Kill never
// signals a reused pid), and returns its status, wait4's error (ECHILD: it
// was reaped behind our back, the status is lost) and the Context's error
// if it ended the child. With flags WNOHANG, done is false, and nothing is
// changed, when the child has not ended yet.
func (p *Process) reap(flags int) (ws syscall.WaitStatus, err, cause error, done bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for {
		var pid int
		pid, err = syscall.Wait4(p.pid, &ws, flags, nil)
		if err == syscall.EINTR {
			continue
		}
		if err == nil && pid == 0 {
			return ws, nil, nil, false
		}
		break
	}
	p.reaped = true
	return ws, err, p.cancelled, true
}

// settle delivers the end of a child reaped with status ws (or wait4's
// error werr): once its output is over (awaitOutput, which may wait), it
// stores the outcome, closes Exited and completes the event on the loop,
// through the reaper's way when fromReaper (completeFromReaper), else
// through Reactor.Post from this goroutine of the child's own.
func (p *Process) settle(ws syscall.WaitStatus, werr, cause error, fromReaper bool) {
	cutErr := p.awaitOutput() // the output is all out before the end, or OutputWait is over
	copyErr := p.copyError()
	if p.ctxStop != nil {
		p.ctxStop()
	}
	var err error
	if werr != nil { // reaped by someone else (a wait for any child): the status is lost
		p.lost = true
		p.out.store(nil, fmt.Errorf("uv: wait4(%d): status lost: %w", p.pid, werr))
	} else {
		p.status = ws.ExitStatus()
		if ws.Signaled() {
			p.status = -int(ws.Signal())
		}
		switch {
		case cause != nil:
			err = fmt.Errorf("uv: process %d: ended by its Context: %w", p.pid, cause)
		case copyErr != nil:
			err = copyErr
		default:
			err = cutErr
		}
		p.out.store(p.status, err)
	}
	close(p.exited) // after the store: Replay gives what ExitStatus says
	if fromReaper {
		p.completeFromReaper()
		return
	}
	p.out.complete(p.r, &p.Base, func() { children.remove(p.r, p.pid) })
}

// waitPidfd waits in the netpoller until pidfd is readable (the child has
// ended) and closes it. It returns false if the descriptor cannot be
// polled; the caller then waits another way.
func waitPidfd(pidfd int) bool {
	if err := syscall.SetNonblock(pidfd, true); err != nil {
		syscall.Close(pidfd)
		return false
	}
	f := os.NewFile(uintptr(pidfd), "pidfd")
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	first := true
	err = rc.Read(func(fd uintptr) bool {
		if first { // the child may be gone already: look before waiting
			first = false
			fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
			n, _ := unix.Poll(fds, 0)
			return n > 0
		}
		return true
	})
	return err == nil
}

// completeFromReaper completes the event on its loop, from the reaper:
// queued for the goroutine that owns the loop, or, when none does, run by
// a goroutine of its own with ownership (Reactor.Post), never in the
// reaper, where a callback that blocks would hold back every child's end.
func (p *Process) completeFromReaper() {
	fn := p.completion
	queued, err := kind.HostOf(p.r.Owner()).PostOwned(fn)
	switch {
	case err != nil: // the reactor is closed: so is the event
		children.remove(p.r, p.pid)
	case !queued:
		go func() {
			if p.r.Post(fn) != nil {
				children.remove(p.r, p.pid)
			}
		}()
	}
}

// completion completes the event with its stored outcome, on the loop.
func (p *Process) completion() {
	children.remove(p.r, p.pid)
	if !p.Flags().Has(event.Closed) {
		eventkind.Complete(&p.Base, p.out.result, p.out.err)
	}
}

func (o *processOps) Owner() event.Owner         { return o.r.Owner() }
func (o *processOps) Event() event.Event         { return (*Process)(o) }
func (o *processOps) Arm() error                 { return onReactorClose(&o.closer, o.r, (*Process)(o)) }
func (o *processOps) Disarm()                    {}
func (o *processOps) Stored() (any, error, bool) { return o.out.stored() }

// Free runs when the event has closed (its own Close, its last Dispose,
// its completion or the reactor's Close): with KillOnClose, a child still
// running is terminated. A child already reaped ended by itself, whether
// or not its completion has reached the loop yet: what it left in its
// group runs on (as for a Command).
func (o *processOps) Free(bool) {
	o.closer.forget()
	if _, _, completed := o.out.stored(); o.killOnClose && !completed {
		p := (*Process)(o)
		p.terminate(o.grace, &termination{
			what:    p.lingerName,
			over:    p.gone,
			running: true,
		})
	}
}
func (o *processOps) Describe() string {
	select {
	case <-o.exited:
	default:
		return fmt.Sprintf("Process(pid=%d)", o.pid)
	}
	switch {
	case o.lost:
		return fmt.Sprintf("Process(pid=%d, status lost)", o.pid)
	case o.status < 0:
		return fmt.Sprintf("Process(pid=%d, signal=%d)", o.pid, -o.status)
	}
	return fmt.Sprintf("Process(pid=%d, exit=%d)", o.pid, o.status)
}

// children is the table of running children by reactor and pid.
var children = childTable{m: map[childKey]*Process{}}

type childKey struct {
	r   *reactor.Reactor
	pid int
}

type childTable struct {
	mu sync.Mutex
	m  map[childKey]*Process
}

func (c *childTable) add(r *reactor.Reactor, p *Process) {
	c.mu.Lock()
	c.m[childKey{r, p.pid}] = p
	c.mu.Unlock()
}

func (c *childTable) get(r *reactor.Reactor, pid int) *Process {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[childKey{r, pid}]
}

func (c *childTable) remove(r *reactor.Reactor, pid int) {
	c.mu.Lock()
	delete(c.m, childKey{r, pid})
	c.mu.Unlock()
}

// Close closes the event: its subscribers hear event.ErrClosed. A running
// child is left running unless ProcessOptions.KillOnClose was set (the
// reaper still reaps it when it ends: ExitStatus and Exited give its end);
// with KillOnClose, Close terminates it (SIGTERM, SIGKILL after Grace) and
// the reactor's Close waits until it has been reaped. Terminate or Kill
// end a child without closing the event. Closing a closed Process does
// nothing and returns nil.
func (p *Process) Close() error {
	return p.Base.Close()
}
