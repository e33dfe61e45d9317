package uv

// The reaper: one goroutine for the whole program waits for the end of
// every child a Process started, through an epoll set of the children's
// pidfds that it watches in Go's netpoller. A child that ends makes its
// pidfd readable, the set readable, and the reaper's wait return; the
// reaper reaps each child the set reports (wait4 on its pid, under the
// Process's lock, as before), records its status, closes Exited and posts
// the completion to the child's reactor. A waiting child costs an entry in
// the set, not a goroutine, an *os.File and a netpoller registration of its
// own: per child, the epoll_ctl that adds its pidfd, the wait4 and the
// close, where a goroutine per child cost three fcntl, two epoll_ctl, a
// poll and the close (docs/benchmarks.md, S1). The reaper does not need
// the loop: a child is reaped, and Exited closed, while the loop is
// blocked in a callback or nobody runs it, as with a goroutine per child.
//
// The set is made with the first child and goes, with its goroutine, once
// no child has been left in it for reaperLinger: a program that starts a
// child now and then makes it again, one that starts many keeps it.

import (
	"errors"
	"os"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// reaperLinger is how long the reaper stays, without a child to wait for,
// before it closes its set and ends.
const reaperLinger = 100 * time.Millisecond

// A reaperSet is the reaper's epoll set and the children in it.
type reaperSet struct {
	epfd  int
	file  *os.File            // epfd, in the netpoller
	procs map[int32]*Process  // by pidfd; under reaper.mu
	ended []reaperEntry       // what a pass took out of procs; the reaper's goroutine's
	buf   [32]unix.EpollEvent // what epoll_wait reported; the reaper's goroutine's
}

type reaperEntry struct {
	p     *Process
	pidfd int
}

// reaper holds the set in use, nil when there is none.
var reaper struct {
	mu  sync.Mutex
	cur *reaperSet
}

// reapLater gives p's child, whose pidfd is pidfd, to the reaper, which
// owns the pidfd from then on. It reports false when the reaper cannot take
// it (no set could be made, or epoll refused the pidfd): the caller then
// watches the child with a goroutine of its own (Process.watch).
func reapLater(p *Process, pidfd int) bool {
	reaper.mu.Lock()
	defer reaper.mu.Unlock()
	s := reaper.cur
	if s == nil {
		var err error
		if s, err = newReaperSet(); err != nil {
			return false
		}
		reaper.cur = s
		go s.run()
	}
	// One-shot: a pidfd reported is not reported again, even while a
	// child forked meanwhile holds a duplicate of it until its exec (the
	// set keeps an entry until the last duplicate closes, and its number
	// may by then be a new child's).
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLONESHOT, Fd: int32(pidfd)}
	if err := unix.EpollCtl(s.epfd, unix.EPOLL_CTL_ADD, pidfd, &ev); err != nil {
		return false // a new set without a child goes after reaperLinger
	}
	s.procs[int32(pidfd)] = p
	return true
}

// newReaperSet makes an empty set, its descriptor in the netpoller.
func newReaperSet() (*reaperSet, error) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, err
	}
	if err := unix.SetNonblock(epfd, true); err != nil { // os.NewFile polls only a non-blocking descriptor
		unix.Close(epfd)
		return nil, err
	}
	f := os.NewFile(uintptr(epfd), "uv-reaper")
	if err := f.SetReadDeadline(time.Time{}); err != nil { // not in the netpoller
		f.Close()
		return nil, err
	}
	return &reaperSet{epfd: epfd, file: f, procs: map[int32]*Process{}}, nil
}

// run is the reaper's goroutine: it waits in the netpoller for the set to
// turn readable, reaps what it reports, and ends once the set has stayed
// empty for reaperLinger.
func (s *reaperSet) run() {
	rc, err := s.file.SyscallConn()
	if err != nil { // not for a file made by os.NewFile
		s.abandon()
		return
	}
	lingering := false
	for {
		err := rc.Read(func(uintptr) bool {
			left := s.pass()
			switch {
			case left == 0 && !lingering:
				lingering = true
				s.file.SetReadDeadline(time.Now().Add(reaperLinger))
			case left > 0 && lingering:
				lingering = false
				s.file.SetReadDeadline(time.Time{})
			}
			return false // wait for more
		})
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			s.abandon() // the netpoller failed us: a goroutine per child from here on
			return
		}
		reaper.mu.Lock()
		if len(s.procs) == 0 {
			if reaper.cur == s {
				reaper.cur = nil
			}
			reaper.mu.Unlock()
			s.file.Close()
			return
		}
		reaper.mu.Unlock()
		lingering = false // children came while it lingered
		s.file.SetReadDeadline(time.Time{})
	}
}

// pass reaps every child the set reports ended, and returns how many are
// left in it.
func (s *reaperSet) pass() int {
	for {
		n, err := unix.EpollWait(s.epfd, s.buf[:], 0)
		if err == unix.EINTR {
			continue
		}
		s.ended = s.ended[:0]
		reaper.mu.Lock()
		for _, ev := range s.buf[:max(n, 0)] {
			if p := s.procs[ev.Fd]; p != nil {
				delete(s.procs, ev.Fd)
				s.ended = append(s.ended, reaperEntry{p, int(ev.Fd)})
			}
		}
		reaper.mu.Unlock()
		for i, e := range s.ended {
			e.p.ended(e.pidfd)
			s.ended[i] = reaperEntry{}
		}
		if n < len(s.buf) {
			break
		}
	}
	reaper.mu.Lock()
	defer reaper.mu.Unlock()
	return len(s.procs)
}

// abandon hands every child of the set to a goroutine of its own and
// closes the set: what the reaper does if its wait fails.
func (s *reaperSet) abandon() {
	reaper.mu.Lock()
	if reaper.cur == s {
		reaper.cur = nil
	}
	procs := s.procs
	s.procs = nil
	reaper.mu.Unlock()
	for fd, p := range procs {
		go p.watch(int(fd))
	}
	s.file.Close()
}

// ended reaps the child, whose pidfd the reaper reported readable, and
// delivers its end. A child with output to wait for (StdioWriter,
// StdioLoop) settles in a goroutine of its own, so that its wait holds no
// other child's end back.
func (p *Process) ended(pidfd int) {
	ws, err, cause, done := p.reap(syscall.WNOHANG)
	if !done {
		// Readable and not yet waitable (never seen): wait for it the
		// slow way, which blocks.
		go p.watch(pidfd)
		return
	}
	unix.Close(pidfd)
	if len(p.outputs) > 0 {
		go p.settle(ws, err, cause, false)
		return
	}
	p.settle(ws, err, cause, true)
}
