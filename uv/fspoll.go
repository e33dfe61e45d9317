package uv

import (
	"fmt"
	"io/fs"
	"math"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	uvcgo "github.com/uvevent/uvevent/internal/cgo"
	"github.com/uvevent/uvevent/reactor"
)

// An FSPoll watches a path by calling stat(2) on it every interval
// (libuv's uv_fs_poll_t): for the file systems inotify cannot see (NFS,
// FUSE, a network share), where an FSEvent hears nothing. Started, it
// stats the path at once, which sets the baseline and reports nothing,
// then once per interval, on a schedule (the n-th stat starts n intervals
// after the first, a slow stat delaying only itself); it notifies its
// callbacks with an FSPollResult each time a stat differs from the one
// before it (its change time, modification time, size, mode, owner,
// group, inode or device), or with an error when a stat fails: an
// *fs.PathError whose Op is "fs_poll" and whose Err is libuv's error
// (uv_fs_poll: ENOENT ...), matching fs.ErrNotExist and the
// syscall.Errno. A failure is reported once, until the error changes or
// a stat succeeds again (a file that is missing is reported missing once,
// then again only after it came back and went again), as libuv reports
// it. The path need not exist when the poll is made or started.
//
// Stop ends the polling; a Start after it begins again with a new
// baseline, as libuv's uv_fs_poll_start does. The same path, the same
// schedule, results and errors on both drivers: on the libuv driver a
// uv_fs_poll_t (its timer and stat requests are libuv's), an event
// reference (see Lifetime in the package doc) whose handle is C memory
// freed in its uv_close callback; on the pure-Go driver (fspoll_go.go) a
// Go-owned event whose stats are Stat requests on DefaultTaskPool,
// started by a hidden timer of the reactor. On either, a started FSPoll is
// held by its reactor whoever points at it, and dropping a stopped one
// without Close is safe. A stat in flight keeps Run going until it
// returns, hidden or not, as libuv's requests in flight do.
type FSPoll struct {
	handle
	e *fsPollState
}

// FSPollResult is one notification of an FSPoll: the stat before the
// change and the stat now, each as an fs.FileInfo whose Name is the
// path's base name and whose Sys is a *syscall.Stat_t. Prev is nil when
// the poll had no successful stat since its Start (the path was missing);
// Curr is nil when the stat failed (the notification's error says why).
type FSPollResult struct {
	Prev fs.FileInfo // the last stat that succeeded before this one, or nil
	Curr fs.FileInfo // the stat now, or nil when it failed
}

// fsPollState is what a poll's event holds on either driver; it never
// points back at its FSPoll.
type fsPollState struct {
	path     string        // as given
	interval time.Duration // whole milliseconds, at least one
}

// NewFSPoll creates a poll of path on r that stats it every interval,
// rounded up to a whole millisecond (libuv's unit; 0 is one millisecond,
// as libuv takes it). It is not started. An empty path, one holding a NUL,
// a negative interval or one past libuv's (2³² ms) are refused with an
// error matching syscall.EINVAL.
func NewFSPoll(r *reactor.Reactor, path string, interval time.Duration) (*FSPoll, error) {
	if err := reactorMade("NewFSPoll", r); err != nil {
		return nil, err
	}
	ms := (interval + time.Millisecond - 1) / time.Millisecond
	if path == "" || strings.IndexByte(path, 0) >= 0 || interval < 0 || ms > math.MaxUint32 {
		return nil, fmt.Errorf("uv: NewFSPoll(%q, %v): %w", path, interval, syscall.EINVAL)
	}
	s := fsPollState{path: path, interval: max(ms, 1) * time.Millisecond}
	if r.Driver() == reactor.DriverGo {
		return newGoFSPoll(r, s)
	}
	e := &fsPollEvent{fsPollState: s}
	if err := newCore(r, &e.core, e, 0, func(l *uvcgo.Loop, id uint64) (uvcgo.Handle, error) {
		return l.NewFSPoll(id)
	}); err != nil {
		return nil, err
	}
	p := &FSPoll{e: &e.fsPollState}
	track(p, &p.handle, &e.core)
	return p, nil
}

// Path returns the polled path.
func (p *FSPoll) Path() string {
	if p.e == nil {
		return ""
	}
	return p.e.path
}

// Interval returns the time between two stats.
func (p *FSPoll) Interval() time.Duration {
	if p.e == nil {
		return 0
	}
	return p.e.interval
}

func (s *fsPollState) kindName() string { return "fspoll" }

func (s *fsPollState) describe() string {
	return fmt.Sprintf("FSPoll(path=%q, interval=%v)", s.path, s.interval)
}

// failure is the error of a stat that failed with status, a negated
// errno, the same on both drivers.
func (s *fsPollState) failure(status int) error {
	return &fs.PathError{Op: "fs_poll", Path: s.path, Err: uvcgo.ErrorOf("uv_fs_poll", status)}
}

// info is st as the fs.FileInfo a result holds: nil for none (libuv's
// all-zero uv_stat_t).
func (s *fsPollState) info(st *syscall.Stat_t) fs.FileInfo {
	if st == nil || *st == (syscall.Stat_t{}) {
		return nil
	}
	return fileInfoOf(filepath.Base(s.path), st)
}

// sameStat is libuv's statbuf_eq, for the fields Linux has: whether two
// stats of the path tell of the same, unchanged file.
func sameStat(a, b *syscall.Stat_t) bool {
	ta, tb := statTimes(a), statTimes(b)
	return *ta[2] == *tb[2] && *ta[1] == *tb[1] && a.Size == b.Size && a.Mode == b.Mode &&
		a.Uid == b.Uid && a.Gid == b.Gid && a.Ino == b.Ino && a.Dev == b.Dev
}
