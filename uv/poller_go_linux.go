package uv

// The pure-Go driver's epoll engine, as libuv keeps uv__io_poll apart
// from poll.c. Each reactor with polls has an epoll set of its own (a
// goPoller), made with its first poll and closed with its last. Polls are
// level-triggered members of the set, added on Start and removed on the
// last Stop, as libuv's watchers are in its epoll set. The set is the
// reactor's kernel (kind.Kernel): with nothing to run, the loop goroutine
// blocks in epoll_wait on it itself, as libuv's loop does, and an eventfd
// in the set is how another goroutine wakes it. What a wait found is
// delivered to each poll, masked and reported the way libuv reports it;
// readiness nobody consumed is reported again by a later wait.

import (
	"fmt"
	"os"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/internal/kind"
	"github.com/uvevent/uvevent/reactor"
)

// The epoll bits and the operation the pure-Go driver's kinds use, named so
// that their files build on every system (poller_go_other.go).
const (
	epollIn     = unix.EPOLLIN
	epollOut    = unix.EPOLLOUT
	epollErr    = unix.EPOLLERR
	epollHup    = unix.EPOLLHUP
	epollCtlDel = unix.EPOLL_CTL_DEL
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

// goPoller is a reactor's epoll set, the reactor's kernel while it has
// members. Its fields are touched on the loop; Wake, from any goroutine,
// uses evfd only. Its members are the pure-Go driver's events over
// descriptors: polls, and the I/O kinds' sockets (io_go.go,
// listener_go.go, udp_go.go).
type goPoller struct {
	r      *reactor.Reactor
	epfd   int // the set; -1 once closed
	evfd   int // an eventfd in the set: Wake writes it
	byFD   map[int]pollMember
	forget func() // unregisters the reactor's closer
	closed bool
	host   kind.Host

	// What the last Wait collected, delivered on the loop: buf holds what
	// epoll_wait reported, left what is still to deliver. A member leaving
	// the set (remove) drops its reports from left: its number may be
	// reused by a new member before the delivery reaches them, which must
	// not be told what the old descriptor had to report (libuv's
	// uv__platform_invalidate_fd).
	buf   [128]unix.EpollEvent
	left  []unix.EpollEvent
	drain [8]byte // what Wait reads the eventfd into
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
	return joinPollerChecked(r, fd, m, true)
}

// joinPollerSocket is joinPoller for a socket made non-blocking by this
// package (accept4 with SOCK_NONBLOCK): epoll watches every socket, so
// neither the check nor the fcntl(2) is made, two system calls fewer per
// accepted connection.
func joinPollerSocket(r *reactor.Reactor, fd int, m pollMember) (*goPoller, error) {
	return joinPollerChecked(r, fd, m, false)
}

// joinPollerChecked is joinPoller, which checks fd (add's check) when
// check is set.
func joinPollerChecked(r *reactor.Reactor, fd int, m pollMember, check bool) (*goPoller, error) {
	pl, err := pollerOf(r)
	if err != nil {
		return nil, err
	}
	if err := pl.add(fd, m, check); err != nil {
		pl.closeIfIdle()
		return nil, err
	}
	return pl, nil
}

// pollerOf returns r's poller, making it (and making it r's kernel) if r
// has none. On the loop.
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
	evfd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		unix.Close(epfd)
		return nil, os.NewSyscallError("eventfd", err)
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(evfd)}
	if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, evfd, &ev); err != nil {
		unix.Close(evfd)
		unix.Close(epfd)
		return nil, os.NewSyscallError("epoll_ctl", err)
	}
	pl := &goPoller{
		r:    r,
		epfd: epfd,
		evfd: evfd,
		byFD: map[int]pollMember{},
		host: kind.HostOf(r.Owner()),
	}
	pl.forget = pl.host.AddCloser(pl.closeAll)
	pl.host.SetKernel(pl)
	goPollers.m[r] = pl
	return pl, nil
}

// add makes fd, the descriptor of m, a member of the poller, not yet
// polled. With check, it checks that epoll can watch it (adding it to the
// set and taking it out again, as libuv's uv_poll_init does) and makes it
// non-blocking.
func (pl *goPoller) add(fd int, m pollMember, check bool) error {
	if _, dup := pl.byFD[fd]; dup {
		return fmt.Errorf("descriptor %d has a poll in this reactor: %w", fd, syscall.EEXIST)
	}
	if check {
		if err := pl.ctl(unix.EPOLL_CTL_ADD, fd, Readable); err != nil {
			return err
		}
		pl.ctl(unix.EPOLL_CTL_DEL, fd, 0)
		if err := unix.SetNonblock(fd, true); err != nil {
			return os.NewSyscallError("fcntl", err)
		}
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

// closeIfIdle closes the poller once it has no poll: the reactor stops
// waiting in it first.
func (pl *goPoller) closeIfIdle() {
	if len(pl.byFD) > 0 || pl.closed {
		return
	}
	pl.closed = true
	goPollers.Lock()
	delete(goPollers.m, pl.r)
	goPollers.Unlock()
	pl.forget()
	pl.host.SetKernel(nil)
	unix.Close(pl.evfd)
	unix.Close(pl.epfd)
	pl.left = nil
	pl.epfd, pl.evfd = -1, -1
}

// Wait implements kind.Kernel: the loop goroutine blocks in epoll_wait on
// the set, and collects what is ready.
func (pl *goPoller) Wait(timeoutMS int) (more bool) {
	n, err := unix.EpollWait(pl.epfd, pl.buf[:], timeoutMS)
	if err != nil { // EINTR: a signal; the loop looks again
		n = 0
	}
	more = n == len(pl.buf)
	j := 0
	for _, ev := range pl.buf[:n] {
		if ev.Fd == int32(pl.evfd) {
			unix.Read(pl.evfd, pl.drain[:]) // a wake-up: spent
			continue
		}
		pl.buf[j] = ev
		j++
	}
	pl.left = pl.buf[:j]
	return more
}

// Deliver implements kind.Kernel: it delivers what the last Wait
// collected, on the loop, and returns how many descriptors had something
// to report.
func (pl *goPoller) Deliver() int {
	n := 0
	for len(pl.left) > 0 {
		ev := pl.left[0]
		pl.left = pl.left[1:]
		// A callback earlier in the delivery may have closed the poll (its
		// reports are gone from left), or every poll and the poller.
		if e := pl.byFD[int(ev.Fd)]; e != nil && !pl.closed {
			n++
			e.fired(ev.Events)
		}
	}
	return n
}

// eventfdOne is what Wake writes: the eventfd counter's increment.
var eventfdOne = [8]byte{1}

// Wake implements kind.Kernel: a write to the set's eventfd. From any
// goroutine, while the reactor sleeps in Wait (which keeps the poller open).
func (pl *goPoller) Wake() { unix.Write(pl.evfd, eventfdOne[:]) }

// FD implements kind.Kernel: the set's descriptor.
func (pl *goPoller) FD() int { return pl.epfd }

// deliver delivers what is ready now, without waiting, and returns how
// many descriptors had something to report. On the loop.
func (pl *goPoller) deliver() int {
	if pl.closed {
		return 0
	}
	pl.Wait(0)
	return pl.Deliver()
}
