package uv

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"syscall"
	"weak"

	"golang.org/x/sys/unix"

	uvcgo "github.com/uvevent/uvevent/cgo"
	"github.com/uvevent/uvevent/event"
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

// A Poll watches a descriptor of any kind libuv can poll (a socket, a
// pipe, an eventfd, a tty; not a regular file) with a uv_poll_t. Started, it
// notifies its callbacks with the PollEvents that fired, on the loop
// goroutine, as long as the condition holds (level-triggered): a callback
// that does not consume the readiness is called again on the next turn.
//
// Errors: a descriptor that is not open is refused at creation (EBADF); an
// error epoll reports on the descriptor while polling (POLLERR, which libuv
// reports as EBADF) arrives as a Disconnect result; any other libuv error
// arrives as an error. After either, libuv has stopped polling, so the
// event is stopped (Start again to poll again).
//
// libuv makes the descriptor non-blocking. The descriptor stays the
// caller's unless the poll was made with the CloseFD option, in which case
// it is closed when the poll is (after libuv stopped watching it). Two polls
// on one descriptor in one reactor are refused (EEXIST): share one through
// PollProxy.
//
// A Poll is an event reference (see Handle): the uv_poll_t is C memory,
// freed in its uv_close callback, and dropping the Poll without Close is
// safe.
type Poll struct {
	Handle
	e *pollEvent
}

// A PollOption changes how NewPoll makes a poll.
type PollOption func(*pollConfig)

type pollConfig struct{ closeFD bool }

// CloseFD makes the poll own its descriptor: it is closed when the poll is
// closed (explicitly, by Dispose, by the collector or by the reactor's
// Close), after libuv has stopped watching it. The poll's flags include
// event.CloseFD. On a failed NewPoll the descriptor is left open.
func CloseFD() PollOption { return func(c *pollConfig) { c.closeFD = true } }

// pollEvent is the poll's event, reachable from the reactor's id table
// until libuv's close callback ran. It never points back at its Poll.
type pollEvent struct {
	core
	fd      int
	events  PollEvents // what the poll watches for without proxies
	stream  bool       // a SOCK_STREAM socket: proxies verify readability
	armed   bool       // started (by the user, or by started proxies)
	polling PollEvents // the mask libuv polls for now (0: stopped)

	// The proxies over this poll (pollproxy.go): every one made and not
	// closed, weakly (one dropped unstarted is collected), and the started
	// ones, strongly (one dropped while started goes on, like a timer).
	proxies   []weak.Pointer[PollProxy]
	started   []*PollProxy
	proxyHold bool // started proxies hold one Start of the poll
}

// NewPoll creates a poll on r watching fd for events (a non-empty set of
// Readable, Writable, Disconnect, Prioritized). It is not started. A bad
// descriptor is refused with an error matching syscall.EBADF, a bad event
// set with syscall.EINVAL.
func NewPoll(r *reactor.Reactor, fd int, events PollEvents, opts ...PollOption) (*Poll, error) {
	if events == 0 || events&^allPollEvents != 0 {
		return nil, fmt.Errorf("uv: NewPoll(fd=%d, events=%v): %w", fd, events, syscall.EINVAL)
	}
	var cfg pollConfig
	for _, o := range opts {
		o(&cfg)
	}
	e := &pollEvent{fd: fd, events: events}
	if t, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TYPE); err == nil && t == unix.SOCK_STREAM {
		e.stream = true
	}
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
		event.AttachFD(&e.Base, fd, cfg.closeFD)
		return h, nil
	}); err != nil {
		return nil, fmt.Errorf("uv: NewPoll(fd=%d): %w", fd, err)
	}
	p := &Poll{e: e}
	track(p, &p.Handle, &e.core)
	return p, nil
}

// FD returns the descriptor the poll watches.
func (p *Poll) FD() int { return p.e.fd }

func (e *pollEvent) kindName() string { return "poll" }

func (e *pollEvent) describe() string {
	s := fmt.Sprintf("Poll(fd=%d, events=%v", e.fd, e.mask())
	if n := e.proxyCount(); n > 0 {
		s += fmt.Sprintf(", proxies=%d", n)
	}
	return s + ")"
}

// mask is what the poll asks libuv for when started: its own events, or,
// while proxies exist, the union of the started proxies' events.
func (e *pollEvent) mask() PollEvents {
	if e.proxyCount() == 0 {
		return e.events
	}
	return proxyMask(e.started)
}

func (e *pollEvent) arm() error {
	e.armed = true
	if err := e.apply(); err != nil {
		e.armed = false
		return err
	}
	return nil
}

func (e *pollEvent) disarm() {
	e.armed = false
	e.apply()
}

// apply brings libuv's mask to what the poll wants now: uv_poll_start with
// the new mask when it changed, uv_poll_stop when it is empty.
func (e *pollEvent) apply() error {
	var want PollEvents
	if e.armed && e.h != 0 {
		want = e.mask()
	}
	if want == e.polling {
		return nil
	}
	if want == 0 {
		e.polling = 0
		if e.h == 0 {
			return nil // closing: uv_close stops it
		}
		return e.loop.StopPoll(e.h)
	}
	if err := e.loop.StartPoll(e.h, int(want)); err != nil {
		return err
	}
	e.polling = want
	return nil
}

// pollOutcome turns libuv's report into the event's result: UV_EBADF (an
// error epoll reported on the descriptor) is a disconnect, other statuses
// are errors.
func pollOutcome(status int32, events int64) (PollEvents, error) {
	switch {
	case status == 0:
		return PollEvents(events), nil
	case syscall.Errno(-status) == syscall.EBADF:
		return Disconnect, nil
	}
	return 0, uvcgo.ErrorOf("uv_poll", int(status))
}

func (e *pollEvent) completed(rec *uvcgo.Completion) {
	res, err := pollOutcome(rec.Status, rec.N)
	if rec.Status != 0 {
		e.polling = 0 // libuv stopped the handle
	}
	if e.proxyCount() > 0 {
		e.notifyProxies(res, err)
	} else {
		event.Notify(&e.Base, res, err)
	}
	if rec.Status != 0 {
		e.stopAll()
	}
}

// nothingToRead peeks without blocking: a readiness the kernel no longer
// confirms (another reader consumed the data since epoll reported it, such
// as a proxy notified before in the same pass) is spurious. End of file and
// socket errors are readiness.
func (e *pollEvent) nothingToRead() bool {
	var b [1]byte
	_, _, err := unix.Recvfrom(e.fd, b[:], unix.MSG_PEEK|unix.MSG_DONTWAIT)
	return err == unix.EAGAIN
}

// stopAll stops the proxies and the poll, after libuv stopped the handle.
func (e *pollEvent) stopAll() {
	for _, p := range slices.Clone(e.started) {
		for event.LoopRefs(p) > 0 {
			p.Stop()
		}
	}
	for event.LoopRefs(e) > 0 {
		e.Stop()
	}
}

// closing closes the proxies (they cannot outlive the handle) and frees
// the descriptor for another poll: uv_close, which follows, stops libuv
// watching it at once.
func (e *pollEvent) closing() {
	pollFDs.remove(e.loop, e.fd)
	for _, w := range slices.Clone(e.proxies) {
		if p := w.Value(); p != nil {
			p.Close()
		}
	}
	e.proxies, e.started = nil, nil
}

// pollFDs records, per loop, the descriptors that have a poll. Loops are
// driven by different goroutines, hence the lock; an entry goes when its
// loop has no poll left.
var pollFDs = fdSet{m: map[*uvcgo.Loop]map[int]struct{}{}}

type fdSet struct {
	mu sync.Mutex
	m  map[*uvcgo.Loop]map[int]struct{}
}

func (s *fdSet) add(l *uvcgo.Loop, fd int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	fds := s.m[l]
	if _, dup := fds[fd]; dup {
		return false
	}
	if fds == nil {
		fds = map[int]struct{}{}
		s.m[l] = fds
	}
	fds[fd] = struct{}{}
	return true
}

func (s *fdSet) remove(l *uvcgo.Loop, fd int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if fds := s.m[l]; fds != nil {
		delete(fds, fd)
		if len(fds) == 0 {
			delete(s.m, l)
		}
	}
}
