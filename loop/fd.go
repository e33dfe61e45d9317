package loop

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// dir is a direction of readiness: reading or writing.
type dir int

const (
	dirRead dir = iota
	dirWrite
)

func (d dir) String() string { return [...]string{"OnReadable", "OnWritable"}[d] }

// fdEntry is what the loop knows of one watched descriptor: its watch and
// the callback of each direction.
type fdEntry struct {
	w  *pollWatch
	fn [2]func(fd int)
}

// OnReadable calls fn(fd) on the loop goroutine whenever fd has data to
// read, end of file or an error (EventInterface's onReadable). It is
// level-triggered, as libuv's poll is: a callback that does not read
// everything is called again on the next turn. A second OnReadable for the
// same fd replaces the callback. The descriptor is made non-blocking and
// stays the caller's: call OffReadable before closing it.
//
// fd is watched by a uv.Poll shared by two uv.PollProxy events (one per
// direction). A descriptor that is not open is refused with an error
// matching syscall.EBADF, one epoll cannot watch (a regular file) with
// syscall.EPERM, a nil fn with syscall.EINVAL.
func (l *Loop) OnReadable(fd int, fn func(fd int)) error { return l.onFD(fd, dirRead, fn) }

// OnWritable calls fn(fd) on the loop goroutine whenever fd has room to
// write (EventInterface's onWritable): call OffWritable once there is nothing
// left to write, or it is called on every turn. A second OnWritable for the
// same fd replaces the callback.
func (l *Loop) OnWritable(fd int, fn func(fd int)) error { return l.onFD(fd, dirWrite, fn) }

// OffReadable stops watching fd for reading and reports whether it was
// watched. After it returns, the callback is not called again.
func (l *Loop) OffReadable(fd int) bool { return l.off(func() bool { return l.offFD(fd, dirRead) }) }

// OffWritable stops watching fd for writing and reports whether it was
// watched.
func (l *Loop) OffWritable(fd int) bool { return l.off(func() bool { return l.offFD(fd, dirWrite) }) }

func (l *Loop) onFD(fd int, d dir, fn func(fd int)) error {
	if fn == nil {
		return errNilFunc(d.String())
	}
	if fd < 0 {
		return fmt.Errorf("loop: %v(fd=%d): %w", d, fd, syscall.EBADF)
	}
	return l.exec(d.String(), func() error {
		e := l.fds[fd]
		if e != nil && e.fn[d] != nil {
			e.fn[d] = fn // replace: the running watch calls the new one
			return nil
		}
		fresh := e == nil
		if fresh {
			w, err := newPollWatch(l.r, fd)
			if err != nil {
				return fmt.Errorf("loop: %v(fd=%d): %w", d, fd, err)
			}
			e = &fdEntry{w: w}
		}
		if err := e.w.start(d, func() {
			if f := e.fn[d]; f != nil && l.fds[fd] == e {
				f(fd)
			}
		}); err != nil {
			if fresh {
				e.w.close()
			}
			return fmt.Errorf("loop: %v(fd=%d): %w", d, fd, err)
		}
		e.fn[d] = fn
		l.fds[fd] = e
		return nil
	})
}

// offFD removes one direction of fd (on the loop); the watch goes when
// neither direction is left.
func (l *Loop) offFD(fd int, d dir) bool {
	e := l.fds[fd]
	if e == nil || e.fn[d] == nil {
		return false
	}
	e.fn[d] = nil
	e.w.stop(d)
	if e.fn[dirRead] == nil && e.fn[dirWrite] == nil {
		delete(l.fds, fd)
		e.w.close()
	}
	return true
}

// pollWatch reports the readiness of one descriptor in one or both
// directions, on either driver: one uv.Poll over the descriptor and a
// uv.PollProxy per direction in use, so the poll polls for the union of the
// directions watched. Its methods run on the loop. Readiness is
// level-triggered: fire is called again on a later turn while the
// condition holds.
type pollWatch struct {
	p  *uv.Poll
	px [2]*uv.PollProxy
}

func newPollWatch(r *reactor.Reactor, fd int) (*pollWatch, error) {
	p, err := uv.NewPoll(r, fd, uv.Readable, uv.PollOptions{})
	if err != nil {
		return nil, err
	}
	return &pollWatch{p: p}, nil
}

var pollDirs = [2]uv.PollEvents{uv.Readable, uv.Writable}

func (w *pollWatch) start(d dir, fire func()) error {
	x, err := uv.NewPollProxy(w.p, pollDirs[d])
	if err != nil {
		return err
	}
	// Readiness, a disconnect or a poll error: the callback's own read or
	// write finds out which. ErrClosed (the reactor's Close) calls nobody.
	if _, err := event.Subscribe(x, func(_ event.Event, _ any, err error) {
		if !errors.Is(err, event.ErrClosed) {
			fire()
		}
	}); err != nil {
		x.Close()
		return err
	}
	if err := x.Start(); err != nil {
		x.Close()
		return err
	}
	w.px[d] = x
	return nil
}

func (w *pollWatch) stop(d dir) {
	if x := w.px[d]; x != nil {
		w.px[d] = nil
		x.Close()
	}
}

func (w *pollWatch) close() { w.p.Close() }
