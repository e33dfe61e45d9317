package uv

// The pure-Go driver's poll: a level-triggered member of its reactor's
// epoll set (poller_go_linux.go), added on Start and removed on the last Stop.

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/eventkind"
	uvcgo "github.com/uvevent/uvevent/internal/cgo"
	"github.com/uvevent/uvevent/reactor"
)

// goPoll is the pure-Go driver's poll event. The reactor's poller holds it
// until it closes; it never points back at its Poll.
type goPoll struct {
	event.Base
	pollState
	keeper
	r  *reactor.Reactor
	pl *goPoller // nil once closed
	// The file the descriptor named at NewPoll (fstat's device and inode),
	// checked whenever the descriptor is handed to epoll again, as the
	// libuv shim checks it: a number closed and reused for another file
	// is refused with EBADF, not polled in the poll's name.
	dev, ino uint64
}

type goPollOps goPoll

func newGoPoll(r *reactor.Reactor, s pollState, opts PollOptions) (*Poll, error) {
	e := &goPoll{pollState: s, r: r}
	e.drv = e
	eventkind.Init(&e.Base, (*goPollOps)(e), true, event.GoOwned)
	var err error
	if x := r.Call(func() {
		if err = armable(r); err != nil {
			return
		}
		// A descriptor that is not open is refused before the poller is
		// made: the set's own descriptor could take its number.
		if err = fdOpen("uv_poll_init", s.fd); err != nil {
			return
		}
		var st unix.Stat_t
		if err = unix.Fstat(s.fd, &st); err != nil {
			err = os.NewSyscallError("fstat", err)
			return
		}
		e.dev, e.ino = uint64(st.Dev), st.Ino
		if e.pl, err = joinPoller(r, e.fd, e); err != nil {
			return
		}
		eventkind.AttachFD(&e.Base, e.fd, opts.CloseFD)
	}); x != nil {
		return nil, x
	}
	if err != nil {
		return nil, fmt.Errorf("uv: NewPoll(fd=%d): %w", s.fd, err)
	}
	p := &Poll{e: &e.pollState}
	// As on the libuv driver, a Poll dropped without Close while stopped
	// is closed (and CloseFD closes its descriptor); a started one holds it.
	trackGo(p, &p.handle, r, e)
	return p, nil
}

func (o *goPollOps) HeldStarts() int { return o.heldStarts() }

func (e *goPoll) kindName() string             { return "poll" }
func (e *goPoll) reactorOf() *reactor.Reactor  { return e.r }
func (e *goPoll) live() bool                   { return e.pl != nil }
func (e *goPoll) notify(r PollEvents, x error) { eventkind.Notify(&e.Base, r, x) }

func (e *goPoll) watch(from, to PollEvents) error {
	if e.pl == nil {
		return nil
	}
	if to != 0 && from != to && e.fdGone() {
		return uvcgo.ErrorOf("uv_poll_start", -int(unix.EBADF)) // as the libuv driver says it
	}
	return e.pl.ctlMask(e.fd, epollEvents(from), epollEvents(to))
}

// fdGone reports whether the descriptor was closed behind the poll: not
// open, or its number reused for another file. As in the libuv shim, a
// number reused for another anonymous-inode descriptor (an eventfd, an
// epoll instance: one inode for them all) cannot be told apart this way.
func (e *goPoll) fdGone() bool {
	var st unix.Stat_t
	return unix.Fstat(e.fd, &st) != nil || uint64(st.Dev) != e.dev || st.Ino != e.ino
}

// fired delivers what epoll reported for the descriptor, on the loop: only
// while the poll is started and open (a callback earlier in the pass may
// have stopped or closed it), and masked by what it polls for now.
func (e *goPoll) fired(events uint32) {
	if e.pl == nil || eventkind.LoopRefs(e) == 0 || e.Flags().Has(event.Closed) {
		return
	}
	status, res, ok := epollReport(events, e.polling)
	if !ok {
		return
	}
	if status != 0 {
		e.pl.ctl(epollCtlDel, e.fd, 0) // libuv stops the watcher too
	}
	e.report(status, res)
}

func (o *goPollOps) Owner() event.Owner { return o.r.Owner() }
func (o *goPollOps) Event() event.Event { return (*goPoll)(o) }
func (o *goPollOps) Describe() string   { return o.describe() }
func (o *goPollOps) Disarm() {
	o.disarm()
	o.dropRef()
}

func (o *goPollOps) Arm() error {
	if err := o.startable(o.r); err != nil {
		return err
	}
	return o.holdIfArmed(o.arm())
}

// Free closes the proxies and takes the descriptor out of the poller (it
// is out of the epoll set already: Disarm ran), before CloseFD closes it.
func (o *goPollOps) Free(bool) {
	o.dropRef()
	o.closeProxies()
	if pl := o.pl; pl != nil {
		o.pl = nil
		pl.remove(o.fd)
	}
}
