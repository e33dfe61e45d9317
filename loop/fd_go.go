package loop

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

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
// a readiness that arrived before the wait is never lost. While a
// direction is watched the reactor holds one unit of work (reactor.Hold):
// Run does not end, as with a started poll on the libuv driver.

// goWatchers counts the watcher goroutines alive, for tests.
var goWatchers atomic.Int64

type goWatch struct {
	l  *Loop
	fd int
	w  [2]*goWatcher
}

// goWatcher is one direction's duplicate and goroutine.
type goWatcher struct {
	f       *os.File
	stopped chan struct{} // closed by shutdown
	ran     chan struct{} // the loop ran the callback (capacity 1)
	exited  chan struct{} // the goroutine has returned
	post    func()        // runs the callback on the loop
	off     bool          // loop-owned: no more callbacks
	once    sync.Once
	release func() // the reactor's hold
	unhook  func() // forgets the reactor-close hook
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
	dup, err := unix.FcntlInt(uintptr(g.fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(dup), fmt.Sprintf("loop fd %d", g.fd))
	if err := f.SetDeadline(time.Time{}); err != nil {
		// Not pollable (a regular file): epoll refuses it, as libuv does.
		f.Close()
		return fmt.Errorf("descriptor cannot be polled: %w", syscall.EPERM)
	}
	release, err := g.l.r.Hold()
	if err != nil {
		f.Close()
		return err
	}
	w := &goWatcher{
		f:       f,
		stopped: make(chan struct{}),
		ran:     make(chan struct{}, 1),
		exited:  make(chan struct{}),
		release: release,
	}
	w.post = func() {
		defer func() {
			select {
			case w.ran <- struct{}{}:
			default:
			}
		}()
		if !w.off {
			fire()
		}
	}
	w.unhook = kind.HostOf(g.l.r).AddCloser(w.shutdown)
	g.w[d] = w
	goWatchers.Add(1)
	go w.run(g.l.r, d)
	return nil
}

func (g *goWatch) stop(d dir) {
	if w := g.w[d]; w != nil {
		g.w[d] = nil
		w.off = true
		w.unhook()
		w.shutdown()
	}
}

func (g *goWatch) close() {
	g.stop(dirRead)
	g.stop(dirWrite)
}

// shutdown ends the goroutine and waits for it: closing the duplicate
// wakes it from the netpoller. On the loop, or at the reactor's Close.
func (w *goWatcher) shutdown() {
	w.once.Do(func() {
		close(w.stopped)
		w.f.Close()
		<-w.exited
		w.release()
	})
}

// run is the watcher goroutine.
func (w *goWatcher) run(r *reactor.Reactor, d dir) {
	defer goWatchers.Add(-1)
	defer close(w.exited)
	host := kind.HostOf(r)
	rc, err := w.f.SyscallConn()
	if err != nil {
		return
	}
	ready := readyFunc(unix.POLLIN)
	wait := rc.Read
	if d == dirWrite {
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
		// Queue, not Post: the callback runs on a turn of the loop, never in
		// this goroutine when nobody runs the loop.
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
