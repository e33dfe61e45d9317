package uv

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	uvcgo "github.com/uvevent/uvevent/cgo"
	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
)

// FSEvents says what happened to a file: libuv's two bits.
type FSEvents int

// The fs event bits. Linux (inotify) reports a creation, a deletion and
// both ends of a move as Rename, and a write or an attribute change as
// Change.
const (
	Rename FSEvents = uvcgo.FSEventRename
	Change FSEvents = uvcgo.FSEventChange
)

// String gives the set as "rename", "change", "rename|change" or "none".
func (ev FSEvents) String() string {
	var parts []string
	if ev&Rename != 0 {
		parts = append(parts, "rename")
	}
	if ev&Change != 0 {
		parts = append(parts, "change")
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, "|")
}

// FSEventResult is one notification of an FSEvent: the file's name,
// relative to the watched directory (for a watched file, the file's own
// name), and what happened to it. With Recursive, names below the root are
// paths ("sub/dir/file", with the system's separator).
type FSEventResult struct {
	Name   string
	Events FSEvents
}

// ErrWatchLimit is reported, with syscall.ENOSPC, when a watch cannot be
// added because the system's limit on inotify watches is reached (raise
// fs.inotify.max_user_watches, or user.max_inotify_watches in a user
// namespace, or watch less).
var ErrWatchLimit = errors.New("inotify watch limit reached (fs.inotify.max_user_watches; user.max_inotify_watches in a user namespace)")

// An FSEvent watches a file or a directory with a uv_fs_event_t (inotify
// on Linux). Started, it notifies its callbacks with an FSEventResult for
// each change libuv reports; the name is copied to Go while the record is
// delivered. Watching starts at Start and ends at Stop: changes made while
// stopped are not reported.
//
// A path that does not exist is an error at creation, matching
// fs.ErrNotExist (and syscall.ENOENT); at Start, if it was removed since.
//
// Recursive watches every directory below the root as well. Linux has no
// recursive watch, so uvevent emulates it with one inotify watch per
// directory: set up at Start, extended when a directory appears (created
// or moved in) and dropped when one goes. Each directory costs one of the
// system's inotify watches; past the limit, Start fails (or, for a
// directory that appears later, the watch reports) an error matching
// ErrWatchLimit and syscall.ENOSPC. Changes inside a directory made before
// its watch is set up (between its creation and the turn that sees it) are
// not reported.
//
// An FSEvent is an event reference (see Handle): its watches are C memory,
// freed in their uv_close callbacks, and dropping it without Close is safe.
type FSEvent struct {
	Handle
	e *fsEvent
}

// An FSEventOption changes how NewFSEvent watches.
type FSEventOption func(*fsEvent)

// Recursive makes the watch cover every directory below the root.
func Recursive() FSEventOption { return func(e *fsEvent) { e.recursive = true } }

// fsEvent is the watch's event; it never points back at its FSEvent.
type fsEvent struct {
	core
	path      string // as given, cleaned
	recursive bool
	children  map[string]uvcgo.Handle // directory path below the root → its watch
}

// NewFSEvent creates a watch of path on r. It is not started. A path that
// does not exist is refused with an error matching fs.ErrNotExist, an empty
// one with syscall.EINVAL.
func NewFSEvent(r *reactor.Reactor, path string, opts ...FSEventOption) (*FSEvent, error) {
	if path == "" || strings.IndexByte(path, 0) >= 0 {
		return nil, fmt.Errorf("uv: NewFSEvent(%q): %w", path, syscall.EINVAL)
	}
	if _, err := os.Lstat(path); err != nil {
		return nil, fmt.Errorf("uv: NewFSEvent: %w", err)
	}
	e := &fsEvent{path: filepath.Clean(path)}
	for _, o := range opts {
		o(e)
	}
	if err := newCore(r, &e.core, e, 0, func(l *uvcgo.Loop, id uint64) (uvcgo.Handle, error) {
		return l.NewFSEvent(id)
	}); err != nil {
		return nil, err
	}
	f := &FSEvent{e: e}
	track(f, &f.Handle, &e.core)
	return f, nil
}

// Path returns the watched path.
func (f *FSEvent) Path() string { return f.e.path }

func (e *fsEvent) kindName() string { return "fsevent" }

func (e *fsEvent) describe() string {
	if !e.recursive {
		return fmt.Sprintf("FSEvent(path=%q)", e.path)
	}
	n := len(e.children)
	if event.LoopRefs(e) > 0 {
		n++ // the root's own watch
	}
	return fmt.Sprintf("FSEvent(path=%q, recursive, watches=%d)", e.path, n)
}

// watchError says which path failed, and names the inotify limit.
func watchError(path string, err error) error {
	if errors.Is(err, syscall.ENOSPC) {
		return fmt.Errorf("uv: FSEvent: watching %s: %w: %w", path, ErrWatchLimit, err)
	}
	return fmt.Errorf("uv: FSEvent: watching %s: %w", path, err)
}

// arm starts the root watch and, if recursive, one per directory below.
func (e *fsEvent) arm() error {
	if err := e.loop.StartFSEvent(e.h, e.path); err != nil {
		return watchError(e.path, err)
	}
	if e.recursive {
		if err := e.watchTree(e.path); err != nil {
			e.disarm()
			return err
		}
	}
	return nil
}

func (e *fsEvent) disarm() {
	if e.h != 0 {
		e.loop.StopFSEvent(e.h)
	}
	e.unwatch("")
}

// closing drops the child watches before the kit closes the root.
func (e *fsEvent) closing() { e.unwatch("") }

// watchTree adds a watch for every directory from dir down (dir itself
// too, unless it is the root) that has none yet.
func (e *fsEvent) watchTree(dir string) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // gone meanwhile
			}
			return err
		}
		if !d.IsDir() || p == e.path {
			return nil
		}
		if _, ok := e.children[p]; ok {
			return nil
		}
		h, err := e.loop.NewFSEventChild(uint64(e.id), p)
		if err != nil {
			if errors.Is(err, syscall.ENOENT) {
				return nil
			}
			return watchError(p, err)
		}
		if e.children == nil {
			e.children = map[string]uvcgo.Handle{}
		}
		e.children[p] = h
		return nil
	})
}

// unwatch closes the child watches of dir and everything below it; "" is
// every child.
func (e *fsEvent) unwatch(dir string) {
	for p, h := range e.children {
		if dir == "" || p == dir || strings.HasPrefix(p, dir+string(filepath.Separator)) {
			e.loop.CloseFSEventChild(h)
			delete(e.children, p)
		}
	}
}

func (e *fsEvent) completed(rec *uvcgo.Completion) {
	if rec.Status != 0 {
		event.Notify(&e.Base, nil, watchError(e.path, uvcgo.ErrorOf("uv_fs_event", int(rec.Status))))
		return
	}
	name := string(rec.Bytes())
	events := FSEvents(rec.Aux) & (Rename | Change)
	full := filepath.Join(e.path, name)
	if rec.Aux&uvcgo.FSEventChild != 0 {
		full = name
		dir := filepath.Dir(full)
		if filepath.Base(full) == filepath.Base(dir) && !exists(dir) {
			// The directory's own end (libuv names it by its base name):
			// its parent's watch reports it.
			e.unwatch(dir)
			return
		}
		rel, err := filepath.Rel(e.path, full)
		if err != nil {
			return
		}
		name = rel
	}
	var watchErr error
	if e.recursive && events&Rename != 0 {
		watchErr = e.follow(full)
	}
	event.Notify(&e.Base, FSEventResult{Name: name, Events: events}, nil)
	if watchErr != nil {
		event.Notify(&e.Base, nil, watchErr)
	}
}

// follow keeps the recursive watch in step with a rename of path: a new
// directory (and what it holds) is watched, a gone one is dropped.
func (e *fsEvent) follow(path string) error {
	st, err := os.Lstat(path)
	switch {
	case err != nil:
		e.unwatch(path)
	case st.IsDir():
		return e.watchTree(path)
	}
	return nil
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// watchedDirs lists the directories below the root that have a watch,
// relative to the root, sorted (for tests).
func (e *fsEvent) watchedDirs() []string {
	var dirs []string
	for p := range e.children {
		if rel, err := filepath.Rel(e.path, p); err == nil {
			dirs = append(dirs, rel)
		}
	}
	sort.Strings(dirs)
	return dirs
}
