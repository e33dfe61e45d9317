package uv

import (
	"fmt"
	"slices"
	"strings"
	"syscall"
	"weak"

	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/eventkind"
	uvcgo "github.com/uvevent/uvevent/internal/cgo"
	"github.com/uvevent/uvevent/reactor"
)

// PollEvents is a set of readiness conditions of a descriptor: what a poll
// watches for, and what it reports when it fires.
type PollEvents int

// The readiness conditions (libuv's UV_READABLE, ...).
const (
	Readable    PollEvents = uvcgo.PollReadable    // data to read, or end of file
	Writable    PollEvents = uvcgo.PollWritable    // room to write
	Disconnect  PollEvents = uvcgo.PollDisconnect  // the peer closed its side (EPOLLRDHUP)
	Prioritized PollEvents = uvcgo.PollPrioritized // out-of-band or priority data (EPOLLPRI)

	allPollEvents = Readable | Writable | Disconnect | Prioritized
)

// String gives the set as letters: r (readable), w (writable), d
// (disconnect), p (prioritized), e.g. "rw"; "none" for the empty set.
func (ev PollEvents) String() string {
	if ev == 0 {
		return "none"
	}
	var b strings.Builder
	for _, x := range []struct {
		bit    PollEvents
		letter byte
	}{{Readable, 'r'}, {Writable, 'w'}, {Disconnect, 'd'}, {Prioritized, 'p'}} {
		if ev&x.bit != 0 {
			b.WriteByte(x.letter)
		}
	}
	if rest := ev &^ allPollEvents; rest != 0 {
		fmt.Fprintf(&b, "+%#x", int(rest))
	}
	return b.String()
}

// A Poll watches a descriptor of any kind epoll can poll (a socket, a
// pipe, an eventfd, a tty; not a regular file). Started, it notifies its
// callbacks with the PollEvents that fired, on the loop goroutine, as long
// as the condition holds (level-triggered): a callback that does not
// consume the readiness is called again on the next turn.
//
// Errors: a descriptor that is not open is refused at creation (EBADF),
// and so is Start (or a proxy's Start that widens the mask) once the
// descriptor was closed behind the poll, or its number reused for another
// file (both drivers compare fstat's device and inode with NewPoll's); an error epoll reports on the
// descriptor while polling (POLLERR, which libuv reports as EBADF) arrives
// as a Disconnect result; any other libuv error arrives as an error. After
// either, polling has stopped, so the event is stopped before its callbacks
// hear it (Start again to poll again, from one of them too).
//
// Closing the descriptor while it is polled is the caller's bug: close the
// Poll first (or give it the descriptor with CloseFD). The poll reports
// EBADF when it can tell: on the libuv driver, a descriptor closed (or its
// number reused for another file) after a Start and before the loop's next
// turn stops the poll, and its callbacks hear an error matching
// syscall.EBADF instead of libuv aborting the process. A descriptor closed
// once epoll has it is dropped by the kernel silently: the poll never fires
// again. docs/kinds.md lists the narrow cases libuv can still abort on.
//
// The descriptor is made non-blocking. It stays the caller's unless the
// poll was made with the CloseFD option, in which case it is closed when the
// poll is (after polling stopped). Two polls on one descriptor in one
// reactor are refused (EEXIST): share one through PollProxy.
//
// On the libuv driver a Poll is a uv_poll_t and the Poll is an event
// reference (see Lifetime in the package doc): the handle is C memory, freed in its uv_close
// callback, and dropping a stopped Poll without Close is safe (a started
// one is held by its reactor). On the pure-Go
// driver it is a Go-owned event over an epoll set of the reactor's own
// (poll_go.go), with the same masks, results, errors and lifetime.
type Poll struct {
	handle
	e *pollState
}

// PollOptions configure NewPoll. The zero value polls a descriptor the
// caller keeps owning.
type PollOptions struct {
	// CloseFD makes the poll own its descriptor: it is closed when the
	// poll is closed (explicitly, by Dispose, by the collector or by the
	// reactor's Close), after polling has stopped. The poll's flags
	// include event.CloseFD. On a failed NewPoll the descriptor is left
	// open.
	CloseFD bool
}

// pollState is what a poll's event holds on either driver: the descriptor,
// what is polled for, and the proxies over it. Its fields are touched on
// the loop.
type pollState struct {
	drv     pollDriver // the event holding this state
	fd      int
	events  PollEvents // what the poll watches for without proxies
	stream  bool       // a SOCK_STREAM socket: proxies verify readability
	armed   bool       // started (by the user, or by started proxies)
	polling PollEvents // the mask polled for now (0: stopped)
	// settling is set while stopAll stops everything: the masks in
	// between (the proxies not yet stopped) are not polled for. On the
	// libuv driver a Start reaches epoll at once, and polling again for
	// a moment would hear the error that stopped polling a second time.
	settling bool

	// The proxies over this poll (pollproxy.go): every one made and not
	// closed, weakly (one dropped unstarted is collected), and the started
	// ones, strongly (one dropped while started goes on, like a timer).
	proxies   []weak.Pointer[PollProxy]
	started   []*PollProxy
	proxyHold bool // started proxies hold one Start of the poll
}

// pollDriver is a poll's event as the code both drivers share sees it.
type pollDriver interface {
	event.Event
	reactorOf() *reactor.Reactor
	// notify tells the poll's own callbacks.
	notify(res PollEvents, err error)
	// live reports whether the descriptor can still be polled (the event
	// is not closing).
	live() bool
	// watch changes what the descriptor is polled for, from one mask to
	// another; to 0 stops polling.
	watch(from, to PollEvents) error
}

// NewPoll creates a poll on r watching fd for events (a non-empty set of
// Readable, Writable, Disconnect, Prioritized). It is not started. A bad
// descriptor is refused with an error matching syscall.EBADF, one epoll
// cannot watch (a regular file) with syscall.EPERM, a descriptor that has a
// poll in r already with syscall.EEXIST, a bad event set with
// syscall.EINVAL.
func NewPoll(r *reactor.Reactor, fd int, events PollEvents, opts PollOptions) (*Poll, error) {
	if events == 0 || events&^allPollEvents != 0 {
		return nil, fmt.Errorf("uv: NewPoll(fd=%d, events=%v): %w", fd, events, syscall.EINVAL)
	}
	s := pollState{fd: fd, events: events}
	if t, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TYPE); err == nil && t == unix.SOCK_STREAM {
		s.stream = true
	}
	if r != nil && r.Driver() == reactor.DriverGo {
		return newGoPoll(r, s, opts)
	}
	e := &pollEvent{pollState: s}
	e.drv = e
	if err := newCore(r, &e.core, e, 0, func(l *uvcgo.Loop, id uint64) (uvcgo.Handle, error) {
		// libuv refuses a second poll on a descriptor only while the first
		// is started; two started ones would corrupt its watcher table.
		if !pollFDs.add(l, fd) {
			return 0, uvcgo.ErrorOf("uv_poll_init", -int(syscall.EEXIST))
		}
		h, err := l.NewPoll(id, fd)
		if err != nil {
			pollFDs.remove(l, fd)
			return 0, err
		}
		eventkind.AttachFD(&e.Base, fd, opts.CloseFD)
		return h, nil
	}); err != nil {
		return nil, fmt.Errorf("uv: NewPoll(fd=%d): %w", fd, err)
	}
	p := &Poll{e: &e.pollState}
	track(p, &p.handle, &e.core)
	return p, nil
}

// heldStarts is how many Starts of the poll are its started proxies'
// (the event's HeldStarts, on either driver): a Stop, which undoes one of
// the user's Starts, never takes that one away, however it reaches the
// poll (the Poll, the event behind it, a wait), so the started proxies go
// on being polled for. Loop only.
func (s *pollState) heldStarts() int {
	if s.proxyHold {
		return 1
	}
	return 0
}

// FD returns the descriptor the poll watches.
func (p *Poll) FD() int {
	if p == nil || p.e == nil {
		return -1
	}
	return p.e.fd
}

func (s *pollState) describe() string {
	d := fmt.Sprintf("Poll(fd=%d, events=%v", s.fd, s.mask())
	if n := s.proxyCount(); n > 0 {
		d += fmt.Sprintf(", proxies=%d", n)
	}
	return d + ")"
}

// mask is what the poll polls for when started: its own events, or, while
// proxies exist, the union of the started proxies' events.
func (s *pollState) mask() PollEvents {
	if s.proxyCount() == 0 {
		return s.events
	}
	return proxyMask(s.started)
}

func (s *pollState) arm() error {
	s.armed = true
	if err := s.apply(); err != nil {
		s.armed = false
		return err
	}
	return nil
}

func (s *pollState) disarm() {
	s.armed = false
	s.apply()
}

// apply brings what the descriptor is polled for to what the poll wants
// now: a new mask when it changed, nothing when it is empty.
func (s *pollState) apply() error {
	if s.settling {
		return nil
	}
	var want PollEvents
	if s.armed && s.drv.live() {
		want = s.mask()
	}
	if want == s.polling {
		return nil
	}
	err := s.drv.watch(s.polling, want)
	if err == nil || want == 0 {
		s.polling = want
	}
	return err
}

// fdOpen returns an error matching syscall.EBADF when fd is not open, in
// the words libuv's call op (uv_poll_init, uv_poll_start) would say it, so
// that both drivers say the same.
func fdOpen(op string, fd int) error {
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != nil {
		return uvcgo.ErrorOf(op, -int(errnoOf(err)))
	}
	return nil
}

// pollOutcome turns libuv's report into the event's result: UV_EBADF (an
// error epoll reported on the descriptor) is a disconnect, but with
// negative events (the shim's UVEV_POLL_FD_CLOSED: the descriptor was
// closed before the turn that would hand it to epoll) it is EBADF; other
// statuses are errors.
func pollOutcome(status int32, events int64) (PollEvents, error) {
	switch {
	case status == 0:
		return PollEvents(events), nil
	case syscall.Errno(-status) == syscall.EBADF && events < 0:
		return 0, uvcgo.ErrorOf("uv_poll_start", int(status))
	case syscall.Errno(-status) == syscall.EBADF:
		return Disconnect, nil
	}
	return 0, uvcgo.ErrorOf("uv_poll", int(status))
}

// report delivers a readiness report (libuv's status and events) to the
// proxies, or to the poll's callbacks while it has none. A status other
// than 0 means polling has stopped: the proxies and the poll are stopped
// first, as libuv's uv__poll_io stops the handle before its callback, so
// that a callback that starts one again polls again (stopping them after
// the callbacks undid such a Start, which had returned nil). The proxies
// started when the report came hear it.
func (s *pollState) report(status int32, events int64) {
	res, err := pollOutcome(status, events)
	proxies := s.proxyCount() > 0
	if status == 0 {
		if proxies {
			s.notifyProxies(s.started, true, res, err)
		} else {
			s.drv.notify(res, err)
		}
		return
	}
	s.polling = 0
	told := slices.Clone(s.started)
	s.stopAll()
	if proxies {
		s.notifyProxies(told, false, res, err)
	} else {
		s.drv.notify(res, err)
	}
}

// nothingToRead peeks without blocking: a readiness the kernel no longer
// confirms (another reader consumed the data since epoll reported it, such
// as a proxy notified before in the same pass) is spurious. End of file and
// socket errors are readiness.
func (s *pollState) nothingToRead() bool {
	var b [1]byte
	_, _, err := unix.Recvfrom(s.fd, b[:], unix.MSG_PEEK|unix.MSG_DONTWAIT)
	return err == unix.EAGAIN
}

// stopAll stops the proxies and the poll, after polling stopped.
func (s *pollState) stopAll() {
	s.settling = true
	defer func() {
		s.settling = false
		s.apply()
	}()
	for _, p := range slices.Clone(s.started) {
		for eventkind.LoopRefs(p) > 0 {
			p.Stop()
		}
	}
	for eventkind.LoopRefs(s.drv) > 0 {
		s.drv.Stop()
	}
}

// closeProxies closes the proxies of a closing poll: they cannot outlive
// it.
func (s *pollState) closeProxies() {
	for _, w := range slices.Clone(s.proxies) {
		if p := w.Value(); p != nil {
			p.Close()
		}
	}
	s.proxies, s.started = nil, nil
}
