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

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/eventkind"
	uvcgo "github.com/uvevent/uvevent/internal/cgo"
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
	Name   string   // the file's name or path, as above
	Events FSEvents // what happened: Rename, Change, or both
}

// ErrWatchLimit is reported, with syscall.ENOSPC, when a watch cannot be
// added because the system's limit on inotify watches is reached (raise
// fs.inotify.max_user_watches, or user.max_inotify_watches in a user
// namespace, or watch less).
var ErrWatchLimit = errors.New("uv: inotify watch limit reached (fs.inotify.max_user_watches; user.max_inotify_watches in a user namespace)")

// ErrWatchGone is the last error an FSEvent reports: the path it watched
// was removed, moved away or replaced by another file (an editor's save by
// rename), so its watch watches nothing any more. It also matches
// fs.ErrNotExist. The watch is stopped before its callbacks hear it:
// Start it again (from a callback too) to watch what is at the path now.
var ErrWatchGone = errors.New("uv: FSEvent: the watched path is gone")

// An FSEvent watches a file or a directory with inotify. Started, it
// notifies its callbacks with an FSEventResult for each change reported;
// the name is copied to Go before the callbacks see it. Watching starts at
// Start and ends at Stop: changes made while stopped are not reported.
//
// A path that does not exist is an error at creation, matching
// fs.ErrNotExist (and syscall.ENOENT); at Start, if it was removed since.
// When the watched path goes (removed, moved away, or replaced by another
// file), the record that tells of it is delivered, then the watch is
// stopped (so Run can end) and its callbacks hear an error matching
// ErrWatchGone and fs.ErrNotExist, naming the path.
//
// Recursive watches every directory below the root as well. Linux has no
// recursive watch, so uvevent emulates it with one inotify watch per
// directory: set up at Start, extended when a directory appears (created
// or moved in) and dropped when one goes. Each directory costs one of the
// system's inotify watches; past the limit, Start fails (or, for a
// directory that appears later, the watch reports) an error matching
// ErrWatchLimit and syscall.ENOSPC. A directory's own change (chmod, touch)
// is reported once, by its path, as inotifywait reports it.
//
// A directory that appears below the root, or is replaced at its path
// (removed and made again, or another moved over it), is watched when its
// parent's watch reports its name with Rename, or when the old directory's
// own watch reports its end; whether it is the one watched before is never
// judged by device and inode number (ext4 gives a directory made after a
// removal the removed one's number). Once watched, the directory is read,
// and so, recursively, are the directories it holds (each watched first):
// each file and directory found is reported with Rename, by its path, as
// inotify reports one made. So a file made in a directory before its watch
// was set up is reported; one may be reported twice across a replacement
// (by its record and by the listing), never lost. A file made and removed
// again before the loop saw its directory is not reported.
//
// On the libuv driver each watch is a uv_fs_event_t and the FSEvent is an
// event reference (see Lifetime in the package doc): its watches are C memory, freed in their
// uv_close callbacks. On the pure-Go driver (fsevent_go_linux.go) the reactor has
// one inotify descriptor, a member of its epoll set, that every FSEvent of
// the reactor shares, as libuv's loop does; the watches, masks, results
// and errors are libuv's. On either, a started FSEvent is held by its
// reactor whoever points at it, and dropping a stopped one without Close
// is safe.
type FSEvent struct {
	handle
	e *fsState
}

// FSEventOptions configure NewFSEvent. The zero value watches the path
// itself (a directory's direct entries).
type FSEventOptions struct {
	// Recursive makes the watch cover every directory below the root.
	Recursive bool
}

// fsState is what a watch's event holds on either driver; it never points
// back at its FSEvent. Its fields are touched on the loop.
type fsState struct {
	drv       fsDriver
	path      string // as given, cleaned
	recursive bool
	root      fileID                // the file watched, as it was at Start
	children  map[string]childWatch // directory path below the root → its watch
}

// childWatch is the watch of a directory below a recursive watch's root:
// what closes it.
type childWatch struct {
	close func()
}

// fileID tells one file from another at the same path.
type fileID struct{ dev, ino uint64 }

// idOf is the file fi describes, or the zero fileID.
func idOf(fi fs.FileInfo) fileID {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return fileID{uint64(st.Dev), uint64(st.Ino)}
	}
	return fileID{}
}

// fsDriver is a watch's event as the code both drivers share sees it.
type fsDriver interface {
	event.Event
	reactorOf() *reactor.Reactor
	// notify tells the watch's callbacks.
	notify(res any, err error)
	// watchRoot and unwatchRoot start and stop the watch of the path.
	watchRoot() error
	unwatchRoot()
	// watchChild watches the directory path for a recursive watch; its
	// reports name the file by path joined with the name, and close ends
	// the watch.
	watchChild(path string) (close func(), err error)
}

// NewFSEvent creates a watch of path on r. It is not started. A path that
// does not exist is refused with an error matching fs.ErrNotExist, an empty
// one with syscall.EINVAL.
func NewFSEvent(r *reactor.Reactor, path string, opts FSEventOptions) (*FSEvent, error) {
	if path == "" || strings.IndexByte(path, 0) >= 0 {
		return nil, fmt.Errorf("uv: NewFSEvent(%q): %w", path, syscall.EINVAL)
	}
	if _, err := os.Lstat(path); err != nil {
		return nil, fmt.Errorf("uv: NewFSEvent: %w", err)
	}
	s := fsState{path: filepath.Clean(path), recursive: opts.Recursive}
	if r != nil && r.Driver() == reactor.DriverGo {
		return newGoFSEvent(r, s)
	}
	e := &fsEvent{fsState: s}
	e.drv = e
	if err := newCore(r, &e.core, e, 0, func(l *uvcgo.Loop, id uint64) (uvcgo.Handle, error) {
		return l.NewFSEvent(id)
	}); err != nil {
		return nil, err
	}
	f := &FSEvent{e: &e.fsState}
	track(f, &f.handle, &e.core)
	return f, nil
}

// Path returns the watched path.
func (f *FSEvent) Path() string {
	if f == nil || f.e == nil {
		return ""
	}
	return f.e.path
}

func (s *fsState) describe() string {
	if !s.recursive {
		return fmt.Sprintf("FSEvent(path=%q)", s.path)
	}
	n := len(s.children)
	if eventkind.LoopRefs(s.drv) > 0 {
		n++ // the root's own watch
	}
	return fmt.Sprintf("FSEvent(path=%q, recursive, watches=%d)", s.path, n)
}

// watchError says which path failed, and names the inotify limit.
func watchError(path string, err error) error {
	if errors.Is(err, syscall.ENOSPC) {
		return fmt.Errorf("uv: FSEvent: watching %s: %w: %w", path, ErrWatchLimit, err)
	}
	return fmt.Errorf("uv: FSEvent: watching %s: %w", path, err)
}

// arm starts the root watch and, if recursive, one per directory below.
func (s *fsState) arm() error {
	if err := s.drv.watchRoot(); err != nil {
		return watchError(s.path, err)
	}
	s.root = fileID{}
	if fi, err := os.Stat(s.path); err == nil { // inotify follows a link, as Stat does
		s.root = idOf(fi)
	}
	if s.recursive {
		if _, err := s.watchTree(s.path, false); err != nil {
			s.disarm()
			return err
		}
	}
	return nil
}

func (s *fsState) disarm() {
	s.drv.unwatchRoot()
	s.unwatch("")
}

// watchTree (re)watches every directory from dir down (dir itself too,
// unless it is the root) and drops the watches of directories below dir
// that are gone. A directory that has a watch gets a new one all the same,
// set up before the old one closes: whether the file at a path is the one
// watched cannot be told by its device and inode number (ext4 gives a
// directory made after a removal the number of the removed one), and a
// watch of the same directory again is the same kernel watch. With list,
// it returns every file and directory found below dir, named relative to
// the root, each read after the watch of its directory was set up: what
// was made in a directory before its watch.
func (s *fsState) watchTree(dir string, list bool) ([]string, error) {
	var found []string
	seen := map[string]bool{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // gone meanwhile
			}
			return err
		}
		if list && p != dir {
			if rel, err := filepath.Rel(s.path, p); err == nil {
				found = append(found, rel)
			}
		}
		if !d.IsDir() || p == s.path {
			return nil
		}
		// WalkDir reads a directory after this returns: anything made
		// in it from now on is reported by the watch, anything before
		// is listed.
		closeFn, err := s.drv.watchChild(p)
		if err != nil {
			if errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ENOTDIR) {
				return nil
			}
			return watchError(p, err)
		}
		if old, ok := s.children[p]; ok {
			old.close()
		}
		if s.children == nil {
			s.children = map[string]childWatch{}
		}
		s.children[p] = childWatch{close: closeFn}
		seen[p] = true
		return nil
	})
	if dir != s.path {
		for p, w := range s.children {
			if !seen[p] && (p == dir || strings.HasPrefix(p, dir+string(filepath.Separator))) {
				w.close()
				delete(s.children, p)
			}
		}
	}
	return found, err
}

// unwatch closes the child watches of dir and everything below it; "" is
// every child.
func (s *fsState) unwatch(dir string) {
	for p, w := range s.children {
		if dir == "" || p == dir || strings.HasPrefix(p, dir+string(filepath.Separator)) {
			w.close()
			delete(s.children, p)
		}
	}
}

// reported delivers what a watch reported, on either driver, as libuv
// reports it: the name of the file (a watch of a file, or a directory's
// own event, gives the base name of the watched path), the events, whether
// a child watch of a recursive one reported it (then the name is the
// child's directory joined with the file's name), and whether the child
// reported its directory itself rather than a file in it.
func (s *fsState) reported(name string, events FSEvents, child, self bool) {
	full := filepath.Join(s.path, name)
	if child {
		full = name
		dir := filepath.Dir(full)
		if self {
			// The directory's own event, an attribute change or its end:
			// its parent's watch reports it, by its path, as inotifywait
			// does. Joined with the base name libuv gives, it would name
			// a file that does not exist ("pre/pre"). Its end while a
			// directory is at its path (another made or moved there) says
			// the watch watches the old one: the one there now is
			// watched and listed.
			if events == Rename {
				s.followAndList(dir)
			}
			return
		}
		rel, err := filepath.Rel(s.path, full)
		if err != nil {
			return
		}
		name = rel
	}
	var found []string
	var watchErr error
	if s.recursive && events == Rename {
		// A Change too is an attribute change (inotify marks a
		// directory's IN_ISDIR, which libuv counts as Rename): the file
		// is the same.
		found, watchErr = s.follow(full)
	}
	s.drv.notify(FSEventResult{Name: name, Events: events}, nil)
	s.notifyFound(found)
	if watchErr != nil {
		s.drv.notify(nil, watchErr)
	}
	if !child && events&Rename != 0 && eventkind.LoopRefs(s.drv) > 0 && s.rootGone() {
		// Stopped first, as a poll whose polling ended: a callback that
		// starts it again watches what is at the path now.
		for eventkind.LoopRefs(s.drv) > 0 {
			s.drv.Stop()
		}
		s.drv.notify(nil, fmt.Errorf("%w: %s: %w", ErrWatchGone, s.path, fs.ErrNotExist))
	}
}

// followAndList follows path and reports what it found.
func (s *fsState) followAndList(path string) {
	found, err := s.follow(path)
	s.notifyFound(found)
	if err != nil && eventkind.LoopRefs(s.drv) > 0 {
		s.drv.notify(nil, err)
	}
}

// notifyFound reports each file found in a directory as it was (re)watched
// as a Rename, as inotify reports a file made: it may have been made
// before the watch. A callback that stops the watch ends the list.
func (s *fsState) notifyFound(found []string) {
	for _, name := range found {
		if eventkind.LoopRefs(s.drv) == 0 {
			return
		}
		s.drv.notify(FSEventResult{Name: name, Events: Rename}, nil)
	}
}

// rootGone reports whether the path no longer names the file the watch
// was set up for.
func (s *fsState) rootGone() bool {
	fi, err := os.Stat(s.path)
	return err != nil || idOf(fi) != s.root
}

// follow keeps the recursive watch in step with a rename of path: a
// directory there (new, or made again, or moved over the one there) is
// (re)watched, with what it holds, which it returns; a gone one is dropped.
func (s *fsState) follow(path string) ([]string, error) {
	st, err := os.Lstat(path)
	switch {
	case err != nil || !st.IsDir():
		s.unwatch(path)
	default:
		return s.watchTree(path, true)
	}
	return nil, nil
}

// watchedDirs lists the directories below the root that have a watch,
// relative to the root, sorted (for tests).
func (s *fsState) watchedDirs() []string {
	var dirs []string
	for p := range s.children {
		if rel, err := filepath.Rel(s.path, p); err == nil {
			dirs = append(dirs, rel)
		}
	}
	sort.Strings(dirs)
	return dirs
}
