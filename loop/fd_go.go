package loop

import (
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/kind"
	"github.com/uvevent/uvevent/reactor"
)

// The pure-Go driver's watch. uv.Poll needs libuv, so on the pure-Go
// driver a watched descriptor is duplicated (one duplicate per direction)
// and the duplicate handed to Go's netpoller as an *os.File. A goroutine
// per direction waits in syscall.RawConn.Read or Write until the level
// (poll(2) with a zero timeout) says the descriptor is ready, posts the
// callback to the loop, and waits until the loop has run it before looking
// again: readiness stays level-triggered, as libuv's poll is, and a
// callback that does not consume it is called again on a later turn. The
// netpoller is edge-triggered, so the level is checked after each re-arm:
// a readiness that arrived before the wait is never lost.
//
// Each direction is an event like any other (fdEvent, Info
// "FDWatch(fd=7, r)"): Go-owned, active while started (Run does not end,
// as with a started poll on the libuv driver), closed by the reactor's
// Close.

// goWatchers counts the watcher goroutines alive, for tests.
var goWatchers atomic.Int64

// goWatch is the pure-Go driver's watch: an fdEvent per direction in use.
type goWatch struct {
	l  *Loop
	fd int
	ev [2]*fdEvent
}

func (l *Loop) newGoWatch(fd int) (*goWatch, error) {
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != nil {
		return nil, err
	}
	// As libuv does: the descriptor is made non-blocking (the flag is the
	// open file's, shared with its duplicates).
	if err := unix.SetNonblock(fd, true); err != nil {
		return nil, err
	}
	return &goWatch{l: l, fd: fd}, nil
}

func (g *goWatch) start(d dir, fire func()) error {
	x := &fdEvent{r: g.l.r, host: kind.HostOf(g.l.r), fd: g.fd, d: d}
	event.Init(&x.Base, (*fdEventOps)(x), true, event.GoOwned)
	if _, err := event.Subscribe(x, func(_ event.Event, _ any, err error) {
		if err == nil {
			fire()
		}
	}); err != nil {
		return err
	}
	if err := x.Start(); err != nil {
		x.Close()
		return err
	}
	x.unhook = x.host.AddCloser(func() { x.Close() })
	g.ev[d] = x
	return nil
}

func (g *goWatch) stop(d dir) {
	if x := g.ev[d]; x != nil {
		g.ev[d] = nil
		x.unhook()
		x.Close()
	}
}

func (g *goWatch) close() {
	g.stop(dirRead)
	g.stop(dirWrite)
}

// fdEvent is one direction of a descriptor watched by Go's netpoller: an
// event notified (with no result) on the loop goroutine while the
// descriptor is ready, as long as it is started.
type fdEvent struct {
	event.Base
	r      *reactor.Reactor
	host   kind.Host
	fd     int
	d      dir
	w      *goWatcher // while armed
	unhook func()     // forgets the reactor-close hook
}

type fdEventOps fdEvent

func (o *fdEventOps) Owner() event.Owner { return o.r }
func (o *fdEventOps) Event() event.Event { return (*fdEvent)(o) }
func (o *fdEventOps) Free(bool)          {}

func (o *fdEventOps) Describe() string {
	return fmt.Sprintf("FDWatch(fd=%d, %s)", o.fd, [...]string{"r", "w"}[o.d])
}

// Arm duplicates the descriptor and starts the watcher goroutine.
func (o *fdEventOps) Arm() error {
	if o.host.Closing() {
		return reactor.ErrReactorClosed
	}
	w, err := newGoWatcher(o.fd, o.d)
	if err != nil {
		return err
	}
	x := (*fdEvent)(o)
	w.post = func() {
		defer w.ranOnce()
		if o.w == w {
			event.Notify(&x.Base, nil, nil)
		}
	}
	o.w = w
	goWatchers.Add(1)
	go w.run(o.host)
	return nil
}

// Disarm ends the watcher goroutine and waits for it.
func (o *fdEventOps) Disarm() {
	if w := o.w; w != nil {
		o.w = nil
		w.shutdown()
	}
}

// goWatcher is one armed direction's duplicate and goroutine.
type goWatcher struct {
	f       *os.File
	d       dir
	stopped chan struct{} // closed by shutdown
	ran     chan struct{} // the loop ran the notification (capacity 1)
	exited  chan struct{} // the goroutine has returned
	post    func()        // notifies the event on the loop
}

func newGoWatcher(fd int, d dir) (*goWatcher, error) {
	dup, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(dup), fmt.Sprintf("loop fd %d", fd))
	if err := f.SetDeadline(time.Time{}); err != nil {
		// Not pollable (a regular file): epoll refuses it, as libuv does.
		f.Close()
		return nil, fmt.Errorf("descriptor cannot be polled: %w", syscall.EPERM)
	}
	return &goWatcher{
		f:       f,
		d:       d,
		stopped: make(chan struct{}),
		ran:     make(chan struct{}, 1),
		exited:  make(chan struct{}),
	}, nil
}

func (w *goWatcher) ranOnce() {
	select {
	case w.ran <- struct{}{}:
	default:
	}
}

// shutdown ends the goroutine and waits for it: closing the duplicate
// wakes it from the netpoller. On the loop.
func (w *goWatcher) shutdown() {
	close(w.stopped)
	w.f.Close()
	<-w.exited
}

// run is the watcher goroutine.
func (w *goWatcher) run(host kind.Host) {
	defer close(w.exited)
	defer goWatchers.Add(-1) // before exited is closed: shutdown's return means it is counted out
	rc, err := w.f.SyscallConn()
	if err != nil {
		return
	}
	ready := readyFunc(unix.POLLIN)
	wait := rc.Read
	if w.d == dirWrite {
		ready, wait = readyFunc(unix.POLLOUT), rc.Write
	}
	for {
		if err := wait(ready); err != nil {
			return // the duplicate was closed
		}
		select {
		case <-w.stopped:
			return
		default:
		}
		// Queue, not Post: the notification comes on a turn of the loop,
		// never in this goroutine when nobody runs the loop.
		if host.Queue(w.post) != nil {
			return // the reactor is closed
		}
		select {
		case <-w.ran:
		case <-w.stopped:
			return
		}
	}
}

// readyFunc returns the RawConn callback that says whether fd is ready for
// events now (an error or hang-up counts: the callback's read or write
// finds it).
func readyFunc(events int16) func(fd uintptr) bool {
	return func(fd uintptr) bool {
		p := []unix.PollFd{{Fd: int32(fd), Events: events}}
		for {
			n, err := unix.Poll(p, 0)
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return err != nil || n > 0
		}
	}
}
