package uv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/kind"
)

// ErrNoGroup: KillGroup on a child that does not lead a process group of
// its own (started without Group or Detached): its group is this
// process's. It matches syscall.EINVAL.
var ErrNoGroup = fmt.Errorf("uv: the child does not lead a process group (start it with Group or Detached): %w", syscall.EINVAL)

// Exited returns a channel closed once the child has been reaped: it is gone
// and its pid is free; and its output is over, as for the completion
// (OutputWait after the exit at most). Unlike the event's completion, it is closed after
// the event's Close too. Nil for a Process StartProcess did not make.
func (p *Process) Exited() <-chan struct{} {
	if p == nil {
		return nil
	}
	return p.exited
}

// KillGroup sends sig to the child's process group: the child and the
// processes it started that stayed in its group (a shell's commands). The
// child must lead a group (ProcessOptions.Group or Detached), else the
// error matches ErrNoGroup. The group can outlive the child: while a member
// lives its id stays reserved, so KillGroup still reaches it after the
// child was reaped; once no member is alive it returns os.ErrProcessDone.
// A number that is not a signal is an error matching syscall.EINVAL. Safe
// from any goroutine.
func (p *Process) KillGroup(sig syscall.Signal) error {
	if sig < 0 || sig > 64 {
		return fmt.Errorf("uv: Process.KillGroup(%d): not a signal number: %w", int(sig), syscall.EINVAL)
	}
	if p == nil || p.pid <= 0 {
		return fmt.Errorf("uv: Process.KillGroup: not a started process: %w", event.ErrNilEvent)
	}
	if !p.group {
		return fmt.Errorf("uv: Process.KillGroup(%d): pid %d: %w", int(sig), p.pid, ErrNoGroup)
	}
	if err := p.signal(sig); err != nil {
		return fmt.Errorf("uv: Process.KillGroup(%d): %w", int(sig), err)
	}
	return nil
}

// Terminate ends the child: SIGTERM now — to its process group when it
// leads one (Group, Detached) — and SIGKILL grace later if by then it has
// not been reaped or something of its group is still there. A grace of 0
// sends SIGKILL at once; a negative one is an error matching
// syscall.EINVAL. Once the child has been reaped (and, for a group, no
// member is left) it returns os.ErrProcessDone.
//
// Terminate returns at once, from any goroutine, the loop goroutine
// included. The child is gone when the Process completes (its result is
// the signal, -15 or -9) and Exited is closed; until then the reactor's
// Close waits for it (Shutdown's context bounds that wait). This is the
// escalation a Command runs on a timeout or a Close.
func (p *Process) Terminate(grace time.Duration) error {
	if p == nil || p.pid <= 0 {
		return fmt.Errorf("uv: Process.Terminate: not a started process: %w", event.ErrNilEvent)
	}
	if grace < 0 {
		return fmt.Errorf("uv: Process.Terminate(%v): negative grace: %w", grace, syscall.EINVAL)
	}
	if err := p.terminate(grace, nil); err != nil {
		return fmt.Errorf("uv: Process.Terminate: %w", err)
	}
	return nil
}

// termination says what a terminate waits for: done is closed when it is
// over (the reactor's Close waits for it; nil means groupDone), over reports at the end of the
// grace period whether SIGKILL is still needed, what names it as it is then, and mark,
// if not nil, runs under mu when the first signal went out. running
// terminates only a child not reaped yet: one that ended by itself is
// not signalled, nor what it left in its group (KillOnClose).
type termination struct {
	what    func() string
	done    <-chan struct{}
	over    func() bool
	mark    func()
	running bool
}

// terminate runs the escalation of Terminate, for the child alone when t
// is nil.
func (p *Process) terminate(grace time.Duration, t *termination) error {
	if t == nil {
		t = &termination{what: p.lingerName, over: p.gone}
	}
	first := syscall.SIGTERM
	if grace == 0 {
		first = syscall.SIGKILL
	}
	p.mu.Lock()
	if t.running && p.reaped {
		p.mu.Unlock()
		return os.ErrProcessDone
	}
	err := p.signalLocked(first)
	if err == nil && t.mark != nil {
		t.mark()
	}
	p.mu.Unlock()
	if err != nil {
		return err
	}
	if t.done == nil {
		t.done = p.groupDone()
	}
	kind.HostOf(p.r.Owner()).Linger(t.what, t.done)
	if grace > 0 {
		time.AfterFunc(grace, func() {
			if !t.over() {
				p.signal(syscall.SIGKILL)
			}
		})
	}
	return nil
}

// contextDone terminates the child when its Context ends, marking the
// event's outcome with the Context's error.
func (p *Process) contextDone(ctx context.Context) {
	p.terminate(p.grace, &termination{
		what: p.lingerName,
		over: p.gone,
		mark: func() { p.cancelled = ctx.Err() },
	})
}

// gone reports whether the child has been reaped and, when it leads a
// group, no member of the group is alive.
func (p *Process) gone() bool {
	select {
	case <-p.exited:
	default:
		return false
	}
	return !p.group || !groupAlive(p.pid)
}

// groupAlive reports whether a process of group pgid is alive: not gone,
// and not a zombie (a member whose parent died is init's to reap, and a
// zombie's pid is no longer running anything). It looks in /proc when
// kill(2) says the group is not empty; without /proc it cannot tell a
// zombie from a live process and says no.
func groupAlive(pgid int) bool {
	if syscall.Kill(-pgid, 0) == syscall.ESRCH {
		return false
	}
	dirs, err := os.ReadDir("/proc")
	if err != nil {
		return false
	}
	for _, d := range dirs {
		if c := d.Name()[0]; c < '0' || c > '9' {
			continue
		}
		b, err := os.ReadFile("/proc/" + d.Name() + "/stat")
		if err != nil {
			continue // gone meanwhile
		}
		// pid (name) state ppid pgrp ...: the name may hold spaces.
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if len(f) >= 3 && f[2] == strconv.Itoa(pgid) && f[0] != "Z" && f[0] != "X" {
			return true
		}
	}
	return false
}

// groupDone returns a channel closed once the child has been reaped and
// no member of its group is alive: what the reactor's Close waits for when
// a group is terminated. Dying members are looked for at a growing
// interval (there is no notification for a group's end); after SIGKILL
// they are gone within moments.
func (p *Process) groupDone() <-chan struct{} {
	if !p.group {
		return p.exited
	}
	done := make(chan struct{})
	go func() {
		<-p.exited
		for d := time.Millisecond; groupAlive(p.pid); d = min(2*d, 100*time.Millisecond) {
			time.Sleep(d)
		}
		close(done)
	}()
	return done
}

// signal sends sig to the child, or to its group when it leads one; once
// that is gone, os.ErrProcessDone.
func (p *Process) signal(sig syscall.Signal) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.signalLocked(sig)
}

// signalLocked is signal with mu held. While the child is not reaped its
// pid (the group's id too) cannot be reused, a zombie holds it; after
// that the group's id stays reserved as long as a member lives, and a
// group with no live member is not signalled.
func (p *Process) signalLocked(sig syscall.Signal) error {
	if p.pid <= 0 {
		return event.ErrNilEvent // never kill(0) or kill(-0): the caller's own group
	}
	if !p.group {
		if p.reaped {
			return os.ErrProcessDone
		}
		return syscall.Kill(p.pid, sig)
	}
	if p.reaped && !groupAlive(p.pid) {
		return os.ErrProcessDone // only zombies left, if anything
	}
	err := syscall.Kill(-p.pid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return os.ErrProcessDone
	}
	return err
}
