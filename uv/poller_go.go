package uv

// The pure-Go driver's epoll engine, as libuv keeps uv__io_poll apart
// from poll.c. Each reactor with polls has an epoll set of its own (a
// goPoller), made with its first poll and closed with its last. Polls are
// level-triggered members of the set, added on Start and removed on the
// last Stop, as libuv's watchers are in its epoll set. The set's
// descriptor is in Go's netpoller; one goroutine waits there until the set
// has something to report (poll(2) checks the level: the netpoller is
// edge-triggered), queues one pass on the loop, and waits until the loop
// has run it before looking again. The pass (epoll_wait with no timeout)
// delivers what is ready to each poll, masked and reported the way libuv
// reports it. Readiness nobody consumed is reported again on a later pass.

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/internal/kind"
	"github.com/uvevent/uvevent/reactor"
)

// The epoll bits of the poll events (libuv's mapping).
var epollBits = [...]struct {
	ev  PollEvents
	bit uint32
}{
	{Readable, unix.EPOLLIN},
	{Prioritized, unix.EPOLLPRI},
	{Writable, unix.EPOLLOUT},
	{Disconnect, unix.EPOLLRDHUP},
}

func epollEvents(m PollEvents) uint32 {
	var b uint32
	for _, x := range epollBits {
		if m&x.ev != 0 {
			b |= x.bit
		}
	}
	return b
}

// epollReport turns what epoll reported for a descriptor polled for
// watching into libuv's report, by libuv's rules (uv__io_poll, uv__poll_io):
// only what is polled for, plus error and hang-up; an error or hang-up
// alone counts as every condition polled for; an error without priority
// data is status EBADF (polling stops). ok is false when nothing is left
// to report.
func epollReport(events uint32, watching PollEvents) (status int32, res int64, ok bool) {
	want := epollEvents(watching)
	events &= want | unix.EPOLLERR | unix.EPOLLHUP
	if events == 0 {
		return 0, 0, false
	}
	if events == unix.EPOLLERR || events == unix.EPOLLHUP {
		events |= want
	}
	if events&unix.EPOLLERR != 0 && events&unix.EPOLLPRI == 0 {
		return -int32(syscall.EBADF), 0, true
	}
	var r PollEvents
	for _, x := range epollBits {
		if events&x.bit != 0 {
			r |= x.ev
		}
	}
	return 0, int64(r), true
}

// goPoller is a reactor's epoll set and the goroutine that watches it.
// Its fields are touched on the loop, except those the goroutine uses,
// which never change. Its members are the pure-Go driver's events over
// descriptors: polls, and the I/O kinds' sockets (io_go.go, listener_go.go,
// udp_go.go).
type goPoller struct {
	r       *reactor.Reactor
	epfd    int      // owned by f
	f       *os.File // the set's descriptor in Go's netpoller
	byFD    map[int]pollMember
	forget  func()        // unregisters the reactor's closer
	closed  bool          // set on the loop; a pass queued before is skipped
	stopped chan struct{} // closed when the poller closes
	rearm   chan struct{} // the loop ran a pass (capacity 1)
	exited  chan struct{} // the goroutine has returned
	passFn  func()        // pass, as a func made once (a method value allocates)
	host    kind.Host

	// The pass being delivered, on the loop: buf holds what epoll_wait
	// reported, left what is still to deliver. A member leaving the set
	// (remove) drops its reports from left: its number may be reused by a
	// new member before the pass reaches them, which must not be told what
	// the old descriptor had to report (libuv's uv__platform_invalidate_fd).
	buf  [128]unix.EpollEvent
	left []unix.EpollEvent
}

// goPollers holds each reactor's poller. Reactors are driven by different
// goroutines, hence the lock.
var goPollers = struct {
	sync.Mutex
	m map[*reactor.Reactor]*goPoller
}{m: map[*reactor.Reactor]*goPoller{}}

// joinPoller makes fd, the descriptor of m, a member of r's poller (made
// if r has none; closed again if adding fails), and returns the poller. On
// the loop.
func joinPoller(r *reactor.Reactor, fd int, m pollMember) (*goPoller, error) {
	pl, err := pollerOf(r)
	if err != nil {
		return nil, err
	}
	if err := pl.add(fd, m); err != nil {
		pl.closeIfIdle()
		return nil, err
	}
	return pl, nil
}

// pollerOf returns r's poller, making it (and its goroutine) if r has
// none. On the loop.
func pollerOf(r *reactor.Reactor) (*goPoller, error) {
	goPollers.Lock()
	defer goPollers.Unlock()
	if pl := goPollers.m[r]; pl != nil {
		return pl, nil
	}
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, os.NewSyscallError("epoll_create1", err)
	}
	if err := unix.SetNonblock(epfd, true); err != nil {
		unix.Close(epfd)
		return nil, err
	}
	f := os.NewFile(uintptr(epfd), "uv poll epoll")
	rc, err := f.SyscallConn()
	if err == nil && f.SetDeadline(time.Time{}) != nil {
		err = errors.New("the netpoller refused the epoll descriptor")
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	pl := &goPoller{
		r:       r,
		epfd:    epfd,
		f:       f,
		byFD:    map[int]pollMember{},
		stopped: make(chan struct{}),
		rearm:   make(chan struct{}, 1),
		exited:  make(chan struct{}),
	}
	pl.passFn = pl.pass
	pl.host = kind.HostOf(r.Owner())
	pl.forget = kind.HostOf(r.Owner()).AddCloser(pl.closeAll)
	goPollers.m[r] = pl
	go pl.run(rc, kind.HostOf(r.Owner()))
	return pl, nil
}

// pollMember is an event over a descriptor in a poller's set.
type pollMember interface {
	// kindName names the member's kind in Stats().Handles.
	kindName() string
	// fired delivers what epoll reported for the descriptor, on the loop.
	fired(events uint32)
	// Close closes the event (the reactor is closing).
	Close() error
}

// add makes fd, the descriptor of m, a member of the poller, not yet
// polled. It checks that epoll can watch it (adding it to the set and
// taking it out again, as libuv's uv_poll_init does) and makes it
// non-blocking.
func (pl *goPoller) add(fd int, m pollMember) error {
	if _, dup := pl.byFD[fd]; dup {
		return fmt.Errorf("descriptor %d has a poll in this reactor: %w", fd, syscall.EEXIST)
	}
	if err := pl.ctl(unix.EPOLL_CTL_ADD, fd, Readable); err != nil {
		return err
	}
	pl.ctl(unix.EPOLL_CTL_DEL, fd, 0)
	if err := unix.SetNonblock(fd, true); err != nil {
		return os.NewSyscallError("fcntl", err)
	}
	pl.byFD[fd] = m
	kind.HostOf(pl.r.Owner()).CountHandle(m.kindName(), 1)
	return nil
}

// remove takes fd's member out of the poller (its descriptor is out of
// the set already, or about to be closed); the last one closes the poller.
func (pl *goPoller) remove(fd int) {
	for i := range pl.left {
		if pl.left[i].Fd == int32(fd) {
			pl.left[i].Fd = -1
		}
	}
	if m := pl.byFD[fd]; m != nil {
		kind.HostOf(pl.r.Owner()).CountHandle(m.kindName(), -1)
	}
	delete(pl.byFD, fd)
	pl.closeIfIdle()
}

// ctlMask changes what fd is polled for, from one mask of epoll bits to
// another (0: out of the set; taking out a descriptor that was closed
// meanwhile is no error: it left the set with its close).
func (pl *goPoller) ctlMask(fd int, from, to uint32) error {
	op := unix.EPOLL_CTL_MOD
	switch {
	case from == to:
		return nil
	case to == 0:
		op = unix.EPOLL_CTL_DEL
	case from == 0:
		op = unix.EPOLL_CTL_ADD
	}
	ev := unix.EpollEvent{Events: to, Fd: int32(fd)}
	if err := unix.EpollCtl(pl.epfd, op, fd, &ev); err != nil && to != 0 {
		return os.NewSyscallError("epoll_ctl", err)
	}
	return nil
}

func (pl *goPoller) ctl(op, fd int, m PollEvents) error {
	ev := unix.EpollEvent{Events: epollEvents(m), Fd: int32(fd)}
	if err := unix.EpollCtl(pl.epfd, op, fd, &ev); err != nil {
		return os.NewSyscallError("epoll_ctl", err)
	}
	return nil
}

// closeAll closes every poll of the reactor, when the reactor closes: the
// last one closes the poller.
func (pl *goPoller) closeAll() {
	for _, e := range pl.byFD {
		e.Close()
	}
	pl.closeIfIdle()
}

// closeIfIdle closes the poller once it has no poll: the goroutine ends
// (closing the descriptor wakes it from the netpoller) and is waited for.
func (pl *goPoller) closeIfIdle() {
	if len(pl.byFD) > 0 || pl.closed {
		return
	}
	pl.closed = true
	goPollers.Lock()
	delete(goPollers.m, pl.r)
	goPollers.Unlock()
	pl.forget()
	close(pl.stopped)
	pl.f.Close()
	<-pl.exited
}

// run is the poller's goroutine.
func (pl *goPoller) run(rc syscall.RawConn, host kind.Host) {
	defer close(pl.exited)
	for {
		if err := rc.Read(epollReady); err != nil {
			return // the descriptor was closed
		}
		select {
		case <-pl.stopped:
			return
		default:
		}
		// Queue, not Post: the pass runs on a turn of the loop, never in
		// this goroutine when nobody runs the loop.
		if host.Queue(pl.passFn) != nil {
			return // the reactor is closed
		}
		select {
		case <-pl.rearm:
		case <-pl.stopped:
			return
		}
	}
}

// epollReady is the RawConn callback: whether the set has something to
// report now.
func epollReady(fd uintptr) bool {
	p := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(p, 0)
		if err == unix.EINTR {
			continue
		}
		return err != nil || n > 0
	}
}

// pass delivers what is ready now to the polls, on the loop. If it
// delivered something it queues itself for the next turn, so that while
// I/O keeps coming the loop looks at the set itself, turn after turn,
// without a hand-off to the goroutine and back for each batch; a pass that
// finds nothing (or fails: a callback panicked or called runtime.Goexit)
// lets the goroutine look again, in the netpoller.
func (pl *goPoller) pass() {
	again := false
	defer func() {
		if again && pl.host.Queue(pl.passFn) == nil {
			return
		}
		select {
		case pl.rearm <- struct{}{}:
		default:
		}
	}()
	again = pl.deliver() > 0
}

// deliver delivers what is ready now to the polls, on the loop, and
// returns how many descriptors had something to report.
func (pl *goPoller) deliver() int {
	if pl.closed {
		return 0
	}
	n, err := unix.EpollWait(pl.epfd, pl.buf[:], 0)
	for err == unix.EINTR {
		n, err = unix.EpollWait(pl.epfd, pl.buf[:], 0)
	}
	n = max(n, 0)
	pl.left = pl.buf[:n]
	for len(pl.left) > 0 {
		ev := pl.left[0]
		pl.left = pl.left[1:]
		// A callback earlier in the pass may have closed the poll (its
		// reports are gone from left), or every poll and the poller.
		if e := pl.byFD[int(ev.Fd)]; e != nil && !pl.closed {
			e.fired(ev.Events)
		}
	}
	return n
}
