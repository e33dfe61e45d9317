package uv

import (
	"encoding/binary"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/eventkind"
	"github.com/uvevent/uvevent/internal/kind"
	"github.com/uvevent/uvevent/reactor"
)

// This file is FSEvent's pure-Go half: inotify used directly, with the
// semantics libuv's Linux backend gives (the same mask, the same mapping of
// records to events). A reactor with fs events has one inotify descriptor, made
// with its first FSEvent and closed when the last is freed; it is a member
// of the reactor's epoll set (poller_go_linux.go), polled for input while it has
// watches. Watches of one inode share the kernel's watch descriptor (wd):
// each wd has a list of the watchers on it, named by the path of the first
// (libuv's watcher_list). Each inotify record is mapped to libuv's events
// and handed to every watcher on its wd, in order, as libuv's callbacks
// are; the shared half (fsevent.go) does the rest, recursion included.

// inotifyMask is what every watch asks inotify for: libuv's mask.
const inotifyMask = unix.IN_ATTRIB | unix.IN_CREATE | unix.IN_MODIFY | unix.IN_DELETE |
	unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_MOVED_FROM | unix.IN_MOVED_TO

// goFSEvent is the pure-Go driver's watch.
type goFSEvent struct {
	event.Base
	fsState
	keeper
	r    *reactor.Reactor
	in   *inotify   // nil once freed
	root *inWatcher // the path's watch while started
}

type goFSEventOps goFSEvent

func newGoFSEvent(r *reactor.Reactor, s fsState) (*FSEvent, error) {
	e := &goFSEvent{fsState: s, r: r}
	e.drv = e
	eventkind.Init(&e.Base, (*goFSEventOps)(e), true, event.GoOwned)
	var err error
	if x := r.Call(func() { err = e.enter() }); x != nil {
		err = x
	}
	if err != nil {
		return nil, fmt.Errorf("uv: NewFSEvent: %w", err)
	}
	f := &FSEvent{e: &e.fsState}
	trackGo(f, &f.handle, r, e)
	return f, nil
}

// enter counts e among the FSEvents of the reactor's inotify descriptor
// (made if it is the first), on the loop.
func (e *goFSEvent) enter() error {
	if err := armable(e.r); err != nil {
		return err
	}
	in, err := inotifyOf(e.r)
	if err != nil {
		return err
	}
	e.in = in
	in.events[e] = struct{}{}
	kind.HostOf(e.r.Owner()).CountHandle(e.kindName(), 1)
	return nil
}

func (e *goFSEvent) kindName() string            { return "fsevent" }
func (e *goFSEvent) reactorOf() *reactor.Reactor { return e.r }
func (e *goFSEvent) notify(res any, err error)   { eventkind.Notify(&e.Base, res, err) }

func (e *goFSEvent) watchRoot() error {
	w, err := e.in.watch(e, e.path, false)
	if err != nil {
		return err
	}
	e.root = w
	return nil
}

func (e *goFSEvent) unwatchRoot() {
	if e.root != nil {
		e.in.unwatch(e.root)
		e.root = nil
	}
}

func (e *goFSEvent) watchChild(path string) (func(), error) {
	w, err := e.in.watch(e, path, true)
	if err != nil {
		return nil, err
	}
	return func() { e.in.unwatch(w) }, nil
}

// report hands a record to the watch, on the loop: only while it is
// started and open (a callback earlier in the pass may have stopped or
// closed it).
func (e *goFSEvent) report(name string, events FSEvents, child, self bool) {
	if e.in == nil || eventkind.LoopRefs(e) == 0 || e.Flags().Has(event.Closed) {
		return
	}
	e.reported(name, events, child, self)
}

// Arm watches, unless the reactor's Close has begun.
func (o *goFSEventOps) Arm() error {
	if err := o.startable(o.r); err != nil {
		return err
	}
	return o.holdIfArmed(o.arm())
}

// Disarm drops the watches.
func (o *goFSEventOps) Disarm() {
	o.disarm()
	o.dropRef()
}

// Free drops the watches (Disarm dropped them already if the watch was
// started) and leaves the reactor's inotify descriptor, closing it if it
// was the last FSEvent.
func (o *goFSEventOps) Free(bool) {
	o.dropRef()
	e := (*goFSEvent)(o)
	if e.in == nil {
		return
	}
	e.disarm()
	in := e.in
	e.in = nil
	delete(in.events, e)
	kind.HostOf(e.r.Owner()).CountHandle(e.kindName(), -1)
	in.closeIfIdle()
}

func (o *goFSEventOps) Owner() event.Owner { return o.r.Owner() }
func (o *goFSEventOps) Event() event.Event { return (*goFSEvent)(o) }
func (o *goFSEventOps) Describe() string   { return o.describe() }

// inotify is a reactor's inotify descriptor and its watches. On the loop.
type inotify struct {
	r      *reactor.Reactor
	fd     int
	pl     *goPoller
	byWD   map[int32]*inWatchList
	events map[*goFSEvent]struct{} // every FSEvent made and not freed
	mask   uint32                  // the epoll events polled for
	closed bool
}

// inWatchList is the watchers on one watch descriptor: libuv's
// watcher_list.
type inWatchList struct {
	wd       int32
	path     string // the first watcher's: records without a name are named by its base name
	watchers []*inWatcher
}

// inWatcher is one watch of an FSEvent: its root's, or a child's.
type inWatcher struct {
	ev    *goFSEvent
	child bool
	path  string       // as watched: a child's records are named by it
	list  *inWatchList // nil once unwatched
}

// inotifies maps each reactor with fs events to its inotify descriptor.
// Reactors are driven by different goroutines, each touching only its own
// entry: the disjoint keys sync.Map is made for.
var inotifies sync.Map // *reactor.Reactor → *inotify

// inotifyOf returns r's inotify descriptor, making it if r has none. On
// the loop.
func inotifyOf(r *reactor.Reactor) (*inotify, error) {
	if in, ok := inotifies.Load(r); ok {
		return in.(*inotify), nil
	}
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil, os.NewSyscallError("inotify_init1", err)
	}
	in := &inotify{r: r, fd: fd, byWD: map[int32]*inWatchList{}, events: map[*goFSEvent]struct{}{}}
	if in.pl, err = joinPoller(r, fd, in); err != nil {
		unix.Close(fd)
		return nil, err
	}
	inotifies.Store(r, in)
	return in, nil
}

func (in *inotify) kindName() string { return "inotify" }

// watch adds a watcher of path for ev: a new watch descriptor, or the
// list of the one inotify gives for the same file.
func (in *inotify) watch(ev *goFSEvent, path string, child bool) (*inWatcher, error) {
	wd, err := unix.InotifyAddWatch(in.fd, path, inotifyMask)
	if err != nil {
		return nil, os.NewSyscallError("inotify_add_watch", err)
	}
	l := in.byWD[int32(wd)]
	if l == nil {
		l = &inWatchList{wd: int32(wd), path: path}
		in.byWD[l.wd] = l
	}
	w := &inWatcher{ev: ev, child: child, path: path, list: l}
	l.watchers = append(l.watchers, w)
	if err := in.poll(); err != nil {
		in.unwatch(w)
		return nil, err
	}
	return w, nil
}

// unwatch removes a watcher; the last of its list removes the kernel's
// watch (which may be gone already, with its file).
func (in *inotify) unwatch(w *inWatcher) {
	l := w.list
	if l == nil {
		return
	}
	w.list = nil
	l.watchers = slices.DeleteFunc(l.watchers, func(x *inWatcher) bool { return x == w })
	if len(l.watchers) == 0 {
		delete(in.byWD, l.wd)
		unix.InotifyRmWatch(in.fd, uint32(l.wd))
	}
	in.poll()
}

// poll polls the descriptor for input while it has watches.
func (in *inotify) poll() error {
	var mask uint32
	if len(in.byWD) > 0 {
		mask = unix.EPOLLIN
	}
	if in.closed || mask == in.mask {
		return nil
	}
	err := in.pl.ctlMask(in.fd, in.mask, mask)
	if err == nil {
		in.mask = mask
	}
	return err
}

// fired reads what inotify has, on the loop, and hands each record to the
// watchers of its descriptor. Input left unread (past a bound that keeps
// the loop fair, or after the last FSEvent closed) is reported again.
func (in *inotify) fired(uint32) {
	var buf [4096]byte // room for several records with a name of NAME_MAX
	for range 16 {
		if in.closed {
			return
		}
		n, err := unix.Read(in.fd, buf[:])
		switch {
		case err == unix.EINTR:
			continue
		case err != nil || n <= 0:
			return // EAGAIN: all read (no other error is possible with this buffer)
		}
		in.dispatch(buf[:n])
	}
}

// dispatch hands the records in b to their watchers, as libuv's
// uv__inotify_read does: a write or an attribute change is Change, any
// other bit Rename; a record without a name (the watched file's own) is
// named by the base name of the list's path; a record for a descriptor
// without watchers (removed meanwhile, or the queue's overflow) is
// dropped.
func (in *inotify) dispatch(b []byte) {
	for len(b) >= unix.SizeofInotifyEvent && !in.closed {
		wd := int32(binary.NativeEndian.Uint32(b[0:]))
		mask := binary.NativeEndian.Uint32(b[4:])
		size := unix.SizeofInotifyEvent + int(binary.NativeEndian.Uint32(b[12:]))
		name, _, _ := strings.Cut(string(b[unix.SizeofInotifyEvent:min(size, len(b))]), "\x00")
		b = b[min(size, len(b)):]

		var events FSEvents
		if mask&(unix.IN_ATTRIB|unix.IN_MODIFY) != 0 {
			events |= Change
		}
		if mask&^(unix.IN_ATTRIB|unix.IN_MODIFY) != 0 {
			events |= Rename
		}
		l := in.byWD[wd]
		if l == nil {
			continue
		}
		self := name == "" // the watched path's own event
		if self {
			name = l.path[strings.LastIndexByte(l.path, '/')+1:]
		}
		// A callback may unwatch any watcher, or close every FSEvent.
		for _, w := range slices.Clone(l.watchers) {
			if w.list == nil || in.closed {
				continue
			}
			if w.child {
				// The watcher's own path, as libuv's uv_fs_event_getpath
				// gives it: another watcher of the same directory may
				// have watched it at a path it has left.
				w.ev.report(w.path+"/"+name, events, true, self)
			} else {
				w.ev.report(name, events, false, false)
			}
		}
	}
}

// Close closes every FSEvent of the reactor (it is closing); the last one
// freed closes the descriptor.
func (in *inotify) Close() error {
	for e := range in.events {
		e.Close()
	}
	in.closeIfIdle()
	return nil
}

// closeIfIdle closes the descriptor once no FSEvent uses it: out of the
// epoll set and the poller, then closed (which drops its watches).
func (in *inotify) closeIfIdle() {
	if len(in.events) > 0 || in.closed {
		return
	}
	in.closed = true
	inotifies.Delete(in.r)
	in.pl.ctlMask(in.fd, in.mask, 0)
	in.pl.remove(in.fd)
	unix.Close(in.fd)
}
