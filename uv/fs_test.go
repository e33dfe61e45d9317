package uv_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/eventkind"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
	"golang.org/x/sys/unix"
)

// got awaits a request (or returns the error that refused it).
func got[T any](t *testing.T, q *uv.FSRequest[T], err error) (T, error) {
	t.Helper()
	if err != nil {
		var zero T
		return zero, err
	}
	return q.Await(waitCtx(t))
}

// must is got failing the test on an error.
func must[T any](t *testing.T, what string) func(q *uv.FSRequest[T], err error) T {
	return func(q *uv.FSRequest[T], err error) T {
		t.Helper()
		v, err := got(t, q, err)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return v
	}
}

// infoShape is what a test compares of an fs.FileInfo.
type infoShape struct {
	Name    string
	Size    int64
	Mode    fs.FileMode
	ModTime time.Time
	IsDir   bool
	Ino     uint64
	Nlink   uint64
}

func shapeOfInfo(fi fs.FileInfo) infoShape {
	s := infoShape{Name: fi.Name(), Size: fi.Size(), Mode: fi.Mode(), ModTime: fi.ModTime(), IsDir: fi.IsDir()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		s.Ino, s.Nlink = st.Ino, uint64(st.Nlink)
	}
	return s
}

// TestFSRequestsLikeOS makes each file system request on each driver and
// checks its result against what package os says of the same file: a
// stat's fs.FileInfo (its Sys a *syscall.Stat_t), a directory's entries,
// a link's target, a real path, a copy's bytes and mode, a temporary
// directory, times set, a file system's numbers.
func TestFSRequestsLikeOS(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		defer stop()
		ctx, r := waitCtx(t), u.Reactor
		dir, err := filepath.EvalSymlinks(t.TempDir())
		uv.UvtMust(t, err)
		at := func(name string) string { return filepath.Join(dir, name) }

		must[struct{}](t, "Mkdir")(uv.Mkdir(ctx, r, at("d"), 0o755))
		must[struct{}](t, "Chmod")(uv.Chmod(ctx, r, at("d"), 0o750))
		f := must[*uv.File](t, "OpenAsync")(uv.OpenAsync(ctx, r, at("f"), os.O_RDWR|os.O_CREATE, 0o600))
		if _, err := f.Write([]byte("hello, world")); err != nil {
			t.Fatal(err)
		}
		must[struct{}](t, "Truncate")(f.TruncateAsync(ctx, 5))
		must[struct{}](t, "Sync")(f.SyncAsync(ctx))
		must[struct{}](t, "Datasync")(f.DatasyncAsync(ctx))
		must[struct{}](t, "fchmod")(f.ChmodAsync(ctx, 0o640))
		mtime := time.Unix(1_700_000_000, 250_000_000)
		must[struct{}](t, "futime")(f.UtimeAsync(ctx, mtime, mtime))
		must[struct{}](t, "fchown")(f.ChownAsync(ctx, -1, -1))
		fst := must[fs.FileInfo](t, "fstat")(f.StatAsync(ctx))
		must[struct{}](t, "Symlink")(uv.Symlink(ctx, r, "f", at("l")))
		must[struct{}](t, "Link")(uv.Link(ctx, r, at("f"), at("h")))
		must[struct{}](t, "Lchown")(uv.Lchown(ctx, r, at("l"), os.Getuid(), -1))
		must[struct{}](t, "Chown")(uv.Chown(ctx, r, at("f"), -1, os.Getgid()))
		dmtime := time.Unix(1_600_000_000, 0)
		must[struct{}](t, "Utime")(uv.Utime(ctx, r, at("d"), dmtime, dmtime))
		uv.UvtMust(t, unix.Mkfifo(at("p"), 0o600))

		for _, name := range []string{"d", "f", "l", "h", "p"} {
			want, err := os.Stat(at(name))
			uv.UvtMust(t, err)
			fi := must[fs.FileInfo](t, "Stat "+name)(uv.Stat(ctx, r, at(name)))
			if diff := cmp.Diff(shapeOfInfo(want), shapeOfInfo(fi)); diff != "" {
				t.Errorf("Stat(%s) differs from os.Stat (-os +uv):\n%s", name, diff)
			}
			want, err = os.Lstat(at(name))
			uv.UvtMust(t, err)
			fi = must[fs.FileInfo](t, "Lstat "+name)(uv.Lstat(ctx, r, at(name)))
			if diff := cmp.Diff(shapeOfInfo(want), shapeOfInfo(fi)); diff != "" {
				t.Errorf("Lstat(%s) differs from os.Lstat (-os +uv):\n%s", name, diff)
			}
		}
		want := infoShape{Name: "f", Size: 5, Mode: 0o640, ModTime: mtime, Nlink: 1}
		if diff := cmp.Diff(want, shapeOfInfo(fst), cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Ino" }, cmp.Ignore())); diff != "" {
			t.Errorf("File.StatAsync before the link (-want +got):\n%s", diff)
		}

		ents := must[[]fs.DirEntry](t, "ReadDir")(uv.ReadDir(ctx, r, dir))
		osEnts, err := os.ReadDir(dir)
		uv.UvtMust(t, err)
		line := func(es []fs.DirEntry) (out []string) {
			for _, e := range es {
				out = append(out, fmt.Sprintf("%s %v %v", e.Name(), e.Type(), e.IsDir()))
			}
			return out
		}
		if diff := cmp.Diff(line(osEnts), line(ents)); diff != "" {
			t.Errorf("ReadDir differs from os.ReadDir (-os +uv):\n%s", diff)
		}
		if fi, err := ents[0].Info(); err != nil || fi.Name() != "d" || !fi.IsDir() {
			t.Errorf("the first entry's Info = %v, %v; want d, a directory", fi, err)
		}

		if s := must[string](t, "Readlink")(uv.Readlink(ctx, r, at("l"))); s != "f" {
			t.Errorf("Readlink = %q, want f", s)
		}
		if s := must[string](t, "Realpath")(uv.Realpath(ctx, r, at("d/../l"))); s != at("f") {
			t.Errorf("Realpath = %q, want %q", s, at("f"))
		}

		must[struct{}](t, "CopyFile")(uv.CopyFile(ctx, r, at("f"), at("c"), 0))
		b, err := os.ReadFile(at("c"))
		uv.UvtMust(t, err)
		ci, err := os.Stat(at("c"))
		uv.UvtMust(t, err)
		if string(b) != "hello" || ci.Mode() != 0o640 {
			t.Errorf("the copy holds %q, mode %v; want hello, -rw-r-----", b, ci.Mode())
		}
		must[struct{}](t, "CopyFile (clone or copy)")(uv.CopyFile(ctx, r, at("f"), at("c"), uv.CopyClone))

		tmp := must[string](t, "MkdirTemp")(uv.MkdirTemp(ctx, r, at("tmp-XXXXXX")))
		if ti, err := os.Stat(tmp); err != nil || !ti.IsDir() || ti.Mode().Perm() != 0o700 ||
			!strings.HasPrefix(tmp, at("tmp-")) || len(tmp) != len(at("tmp-XXXXXX")) || strings.HasSuffix(tmp, "XXXXXX") {
			t.Errorf("MkdirTemp made %q (%v, %v), want a new 0700 directory from the template", tmp, ti, err)
		}
		must[struct{}](t, "Rmdir")(uv.Rmdir(ctx, r, tmp))
		must[struct{}](t, "Access")(uv.Access(ctx, r, at("f"), unix.R_OK|unix.W_OK))
		must[struct{}](t, "RenameFile")(uv.RenameFile(ctx, r, at("c"), at("c2")))
		must[struct{}](t, "Unlink")(uv.Unlink(ctx, r, at("c2")))
		if _, err := os.Lstat(at("c2")); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("after RenameFile and Unlink, c2: %v; want it gone", err)
		}

		var osfs unix.Statfs_t
		uv.UvtMust(t, unix.Statfs(dir, &osfs))
		sfs := must[uv.StatFS](t, "Statfs")(uv.Statfs(ctx, r, dir))
		if sfs.Type != uint64(osfs.Type) || sfs.BlockSize != uint64(osfs.Bsize) || sfs.Blocks != osfs.Blocks || sfs.Files != osfs.Files {
			t.Errorf("Statfs = %+v, want statfs(2)'s %+v", sfs, osfs)
		}
		uv.UvtMust(t, f.Close())
	})
}

// errShapeFS is what a test compares of a file system request's error.
type errShapeFS struct {
	Type     string // *fs.PathError or *os.LinkError
	Op, Path string
	UvOp     string
	Errno    syscall.Errno
	NotExist bool
	Exist    bool
}

func shapeOfFSErr(err error) errShapeFS {
	var s errShapeFS
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		s.Type, s.Op, s.Path = "PathError", pe.Op, filepath.Base(pe.Path)
	case errors.As(err, &le):
		s.Type, s.Op, s.Path = "LinkError", le.Op, filepath.Base(le.Old)+" "+filepath.Base(le.New)
	}
	s.UvOp = shapeOf(err).UvOp
	errors.As(err, &s.Errno)
	s.NotExist, s.Exist = errors.Is(err, fs.ErrNotExist), errors.Is(err, fs.ErrExist)
	return s
}

// TestFSRequestErrors: each request that fails completes with an
// *fs.PathError (an *os.LinkError for two paths) naming libuv's request
// and its path, wrapping libuv's error and matching fs.ErrNotExist and
// friends, the same on both drivers; bad input is refused at once.
func TestFSRequestErrors(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		defer stop()
		ctx, r := waitCtx(t), u.Reactor
		dir := t.TempDir()
		at := func(name string) string { return filepath.Join(dir, name) }
		uv.UvtMust(t, os.WriteFile(at("f"), nil, 0o600))
		uv.UvtMust(t, os.MkdirAll(at("d/sub"), 0o700))
		done, cancel := context.WithCancel(context.Background())
		cancel()
		cases := []struct {
			name string
			err  error
			want errShapeFS
		}{
			{"stat", fsErr(uv.Stat(ctx, r, at("missing"))), errShapeFS{"PathError", "stat", "missing", "uv_fs_stat", syscall.ENOENT, true, false}},
			{"lstat", fsErr(uv.Lstat(ctx, r, at("missing"))), errShapeFS{"PathError", "lstat", "missing", "uv_fs_lstat", syscall.ENOENT, true, false}},
			{"mkdir", fsErr(uv.Mkdir(ctx, r, at("d"), 0o700)), errShapeFS{"PathError", "mkdir", "d", "uv_fs_mkdir", syscall.EEXIST, false, true}},
			{"rmdir", fsErr(uv.Rmdir(ctx, r, at("d"))), errShapeFS{"PathError", "rmdir", "d", "uv_fs_rmdir", syscall.ENOTEMPTY, false, true}},
			{"unlink", fsErr(uv.Unlink(ctx, r, at("d"))), errShapeFS{"PathError", "unlink", "d", "uv_fs_unlink", syscall.EISDIR, false, false}},
			{"rename", fsErr(uv.RenameFile(ctx, r, at("missing"), at("x"))), errShapeFS{"LinkError", "rename", "missing x", "uv_fs_rename", syscall.ENOENT, true, false}},
			{"copyfile excl", fsErr(uv.CopyFile(ctx, r, at("f"), at("f"), uv.CopyExcl)), errShapeFS{"LinkError", "copyfile", "f f", "uv_fs_copyfile", syscall.EEXIST, false, true}},
			{"scandir", fsErr(uv.ReadDir(ctx, r, at("f"))), errShapeFS{"PathError", "scandir", "f", "uv_fs_scandir", syscall.ENOTDIR, false, false}},
			{"readlink", fsErr(uv.Readlink(ctx, r, at("f"))), errShapeFS{"PathError", "readlink", "f", "uv_fs_readlink", syscall.EINVAL, false, false}},
			{"realpath", fsErr(uv.Realpath(ctx, r, at("missing"))), errShapeFS{"PathError", "realpath", "missing", "uv_fs_realpath", syscall.ENOENT, true, false}},
			{"mkdtemp", fsErr(uv.MkdirTemp(ctx, r, at("no-template"))), errShapeFS{"PathError", "mkdtemp", "no-template", "uv_fs_mkdtemp", syscall.EINVAL, false, false}},
			{"access", fsErr(uv.Access(ctx, r, at("missing"), unix.F_OK)), errShapeFS{"PathError", "access", "missing", "uv_fs_access", syscall.ENOENT, true, false}},
			{"statfs", fsErr(uv.Statfs(ctx, r, at("missing"))), errShapeFS{"PathError", "statfs", "missing", "uv_fs_statfs", syscall.ENOENT, true, false}},
			{"an empty path", fsErr(uv.Stat(ctx, r, "")), errShapeFS{"PathError", "stat", ".", "uv_fs_stat", syscall.ENOENT, true, false}},
			{"a NUL in a path", fsErr(uv.Stat(ctx, r, "a\x00b")), errShapeFS{Type: "PathError", Op: "stat", Path: "a\x00b", Errno: syscall.EINVAL}},
			{"a context already done", fsErr(uv.Unlink(done, r, at("f"))), errShapeFS{Type: "PathError", Op: "unlink", Path: "f"}},
			{"no reactor", fsErr(uv.Stat(ctx, nil, at("f"))), errShapeFS{Type: "PathError", Op: "stat", Path: "f", Errno: syscall.EINVAL}},
		}
		for _, c := range cases {
			if diff := cmp.Diff(c.want, shapeOfFSErr(c.err)); diff != "" {
				t.Errorf("%s: %v: error differs (-want +got):\n%s", c.name, c.err, diff)
			}
		}
		if _, err := uv.Unlink(done, r, at("f")); !errors.Is(err, context.Canceled) {
			t.Errorf("a request with a context already done: %v, want context.Canceled", err)
		}
		if _, err := os.Stat(at("f")); err != nil {
			t.Errorf("the unlink refused ran: %v", err)
		}
	})
}

// fsErr returns the error a request completes with, or the one that
// refused it.
func fsErr[T any](q *uv.FSRequest[T], err error) error {
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
	defer cancel()
	_, err = q.Await(ctx)
	return err
}

// TestFSRequestCancelledBeforeRun: a request closed, or whose context
// ends, while the pool has not started it never runs (the file it would
// remove stays, the directory it would make is never made), and its
// waiters hear why: event.ErrClosed for a close, the context's error (in
// the request's *fs.PathError) for a context; on each driver.
func TestFSRequestCancelledBeforeRun(t *testing.T) {
	eachDriverCounted(t, func(t *testing.T, u *uv.UvtReactor, base, fds int) {
		stop := uv.UvtServe(t, u)
		dir := t.TempDir()
		keep := filepath.Join(dir, "keep")
		uv.UvtMust(t, os.WriteFile(keep, nil, 0o600))
		blockers, _, release := holdPool(t, u)
		uv.UvtWaitFor(t, "the pool to be held", poolHeld)
		ctx, cancel := context.WithCancel(context.Background())
		mk, err := uv.Mkdir(ctx, u.Reactor, filepath.Join(dir, "never"), 0o700)
		uv.UvtMust(t, err)
		rm, err := uv.Unlink(context.Background(), u.Reactor, keep)
		uv.UvtMust(t, err)
		cancel()
		uv.UvtMust(t, rm.Close())
		_, mkErr := mk.Await(waitCtx(t))
		_, rmErr := rm.Await(waitCtx(t))
		var pe *fs.PathError
		if !errors.Is(mkErr, context.Canceled) || !errors.As(mkErr, &pe) || pe.Op != "mkdir" {
			t.Errorf("the mkdir whose context ended: %v, want a PathError of mkdir matching context.Canceled", mkErr)
		}
		if !errors.Is(rmErr, event.ErrClosed) {
			t.Errorf("the closed unlink: %v, want event.ErrClosed", rmErr)
		}
		letPoolGo(t, blockers, release)
		for _, q := range blockers {
			if f, ok, err := q.Outcome(); ok && err == nil {
				uv.UvtMust(t, f.Close())
			}
		}
		// A request made after the cancelled ones has run: they are not
		// queued still.
		must[fs.FileInfo](t, "Stat")(uv.Stat(context.Background(), u.Reactor, keep))
		if _, err := os.Stat(filepath.Join(dir, "never")); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("the mkdir cancelled before it ran made its directory: %v", err)
		}
		stop()
		uv.UvtShutdown(t, u, false)
		uv.UvtNoLeaks(t, base, fds)
	})
}

// fsErrSeen is what one failing request gave on one driver: its error's
// text (the test's directory written DIR), its errno and the sentinels it
// matches, and the types of its chain.
type fsErrSeen struct {
	Text     string
	Errno    syscall.Errno
	NotExist bool
	Exist    bool
	Closed   bool
	Canceled bool
	Chain    []string
}

func seenOf(err error, dir string) fsErrSeen {
	s := fsErrSeen{Text: "<nil>"}
	if err == nil {
		return s
	}
	s.Text = strings.ReplaceAll(err.Error(), dir, "DIR")
	errors.As(err, &s.Errno)
	s.NotExist, s.Exist = errors.Is(err, os.ErrNotExist), errors.Is(err, os.ErrExist)
	s.Closed, s.Canceled = errors.Is(err, os.ErrClosed) || errors.Is(err, event.ErrClosed), errors.Is(err, context.Canceled)
	for e := err; e != nil; e = errors.Unwrap(e) {
		s.Chain = append(s.Chain, reflect.TypeOf(e).String())
	}
	return s
}

// fsFailures makes every failing file system request of the table in a
// fresh directory on u's reactor and returns what each gave, by name.
func fsFailures(t *testing.T, u *uv.UvtReactor) map[string]fsErrSeen {
	stop := uv.UvtServe(t, u)
	defer stop()
	ctx, r := waitCtx(t), u.Reactor
	dir := t.TempDir()
	at := func(name string) string { return filepath.Join(dir, name) }
	uv.UvtMust(t, os.WriteFile(at("f"), []byte("x"), 0o600))
	uv.UvtMust(t, os.MkdirAll(at("d/sub"), 0o700))
	ro, err := uv.OpenFile(ctx, r, at("f"), os.O_RDONLY, 0)
	uv.UvtMust(t, err)
	defer ro.Close()
	closed, err := uv.OpenFile(ctx, r, at("f"), os.O_RDONLY, 0)
	uv.UvtMust(t, err)
	uv.UvtMust(t, closed.Close())
	dirFile, err := uv.OpenFile(ctx, r, at("d"), os.O_RDONLY, 0)
	uv.UvtMust(t, err)
	defer dirFile.Close()
	done, cancel := context.WithCancel(context.Background())
	cancel()
	when := time.Unix(1_700_000_000, 0)
	errs := map[string]error{
		"stat":            fsErr(uv.Stat(ctx, r, at("missing"))),
		"lstat":           fsErr(uv.Lstat(ctx, r, at("missing"))),
		"statfs":          fsErr(uv.Statfs(ctx, r, at("missing"))),
		"scandir":         fsErr(uv.ReadDir(ctx, r, at("f"))),
		"scandir missing": fsErr(uv.ReadDir(ctx, r, at("missing"))),
		"mkdir":           fsErr(uv.Mkdir(ctx, r, at("d"), 0o700)),
		"mkdir no parent": fsErr(uv.Mkdir(ctx, r, at("missing/d"), 0o700)),
		"mkdtemp":         fsErr(uv.MkdirTemp(ctx, r, at("no-template"))),
		"rmdir":           fsErr(uv.Rmdir(ctx, r, at("d"))),
		"rmdir a file":    fsErr(uv.Rmdir(ctx, r, at("f"))),
		"unlink":          fsErr(uv.Unlink(ctx, r, at("d"))),
		"unlink missing":  fsErr(uv.Unlink(ctx, r, at("missing"))),
		"rename":          fsErr(uv.RenameFile(ctx, r, at("missing"), at("x"))),
		"rename into":     fsErr(uv.RenameFile(ctx, r, at("d"), at("d/sub/d"))),
		"link":            fsErr(uv.Link(ctx, r, at("f"), at("d"))),
		"symlink":         fsErr(uv.Symlink(ctx, r, "f", at("f"))),
		"readlink":        fsErr(uv.Readlink(ctx, r, at("f"))),
		"realpath":        fsErr(uv.Realpath(ctx, r, at("missing"))),
		"copyfile":        fsErr(uv.CopyFile(ctx, r, at("missing"), at("c"), 0)),
		"copyfile excl":   fsErr(uv.CopyFile(ctx, r, at("f"), at("d"), uv.CopyExcl)),
		"copyfile a dir":  fsErr(uv.CopyFile(ctx, r, at("d"), at("c"), 0)),
		"access":          fsErr(uv.Access(ctx, r, at("missing"), unix.F_OK)),
		"chmod":           fsErr(uv.Chmod(ctx, r, at("missing"), 0o600)),
		"chown":           fsErr(uv.Chown(ctx, r, at("missing"), -1, -1)),
		"lchown":          fsErr(uv.Lchown(ctx, r, at("missing"), -1, -1)),
		"utime":           fsErr(uv.Utime(ctx, r, at("missing"), when, when)),
		"open":            fsErr(uv.OpenAsync(ctx, r, at("missing"), os.O_RDONLY, 0)),
		"open excl":       fsErr(uv.OpenAsync(ctx, r, at("f"), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)),
		"open a dir rw":   fsErr(uv.OpenAsync(ctx, r, at("d"), os.O_RDWR, 0)),
		"read a dir":      fsErr(dirFile.ReadAsync(context.Background(), 1, 0)),
		"write read-only": fsErr(ro.WriteAsync(context.Background(), []byte("y"), 0)),
		"ftruncate ro":    fsErr(ro.TruncateAsync(ctx, 0)),
		"ftruncate -1":    fsErr(ro.TruncateAsync(ctx, -1)),
		"fstat closed":    fsErr(closed.StatAsync(ctx)),
		"fsync closed":    fsErr(closed.SyncAsync(ctx)),
		"a NUL in a path": fsErr(uv.Stat(ctx, r, "a\x00b")),
		"a done context":  fsErr(uv.Unlink(done, r, at("f"))),
		"no reactor":      fsErr(uv.Stat(ctx, nil, at("f"))),
	}
	_, errs["fsevent"] = uv.NewFSEvent(r, at("missing"), uv.FSEventOptions{})
	p, c := pollFS(t, u, at("missing"))
	defer p.Close()
	uv.UvtMust(t, p.Start())
	uv.UvtWaitFor(t, "the poll's error", func() bool { _, n := c.counts(); return n > 0 })
	errs["fs_poll"] = c.err(0)
	out := make(map[string]fsErrSeen, len(errs))
	for name, err := range errs {
		out[name] = seenOf(err, dir)
	}
	return out
}

// fsErrWant is the text each failing request of fsFailures gives, on
// either driver, up to libuv's message for the errno: that message (in
// parentheses) is libuv's uv_strerror where libuv is linked in, the
// errno's own text in a build without cgo.
var fsErrWant = map[string]string{
	"stat":            "stat DIR/missing: uv_fs_stat: ENOENT",
	"lstat":           "lstat DIR/missing: uv_fs_lstat: ENOENT",
	"statfs":          "statfs DIR/missing: uv_fs_statfs: ENOENT",
	"scandir":         "scandir DIR/f: uv_fs_scandir: ENOTDIR",
	"scandir missing": "scandir DIR/missing: uv_fs_scandir: ENOENT",
	"mkdir":           "mkdir DIR/d: uv_fs_mkdir: EEXIST",
	"mkdir no parent": "mkdir DIR/missing/d: uv_fs_mkdir: ENOENT",
	"mkdtemp":         "mkdtemp DIR/no-template: uv_fs_mkdtemp: EINVAL",
	"rmdir":           "rmdir DIR/d: uv_fs_rmdir: ENOTEMPTY",
	"rmdir a file":    "rmdir DIR/f: uv_fs_rmdir: ENOTDIR",
	"unlink":          "unlink DIR/d: uv_fs_unlink: EISDIR",
	"unlink missing":  "unlink DIR/missing: uv_fs_unlink: ENOENT",
	"rename":          "rename DIR/missing DIR/x: uv_fs_rename: ENOENT",
	"rename into":     "rename DIR/d DIR/d/sub/d: uv_fs_rename: EINVAL",
	"link":            "link DIR/f DIR/d: uv_fs_link: EEXIST",
	"symlink":         "symlink f DIR/f: uv_fs_symlink: EEXIST",
	"readlink":        "readlink DIR/f: uv_fs_readlink: EINVAL",
	"realpath":        "realpath DIR/missing: uv_fs_realpath: ENOENT",
	"copyfile":        "copyfile DIR/missing DIR/c: uv_fs_copyfile: ENOENT",
	"copyfile excl":   "copyfile DIR/f DIR/d: uv_fs_copyfile: EEXIST",
	"copyfile a dir":  "copyfile DIR/d DIR/c: uv_fs_copyfile: EISDIR",
	"access":          "access DIR/missing: uv_fs_access: ENOENT",
	"chmod":           "chmod DIR/missing: uv_fs_chmod: ENOENT",
	"chown":           "chown DIR/missing: uv_fs_chown: ENOENT",
	"lchown":          "lchown DIR/missing: uv_fs_lchown: ENOENT",
	"utime":           "utime DIR/missing: uv_fs_utime: ENOENT",
	"open":            "open DIR/missing: uv_fs_open: ENOENT",
	"open excl":       "open DIR/f: uv_fs_open: EEXIST",
	"open a dir rw":   "open DIR/d: uv_fs_open: EISDIR",
	"read a dir":      "read DIR/d: uv_fs_read: EISDIR",
	"write read-only": "write DIR/f: uv_fs_write: EBADF",
	"ftruncate ro":    "ftruncate DIR/f: uv_fs_ftruncate: EINVAL",
	"ftruncate -1":    "ftruncate DIR/f: uv_fs_ftruncate: EINVAL",
	"fstat closed":    "fstat DIR/f: file already closed",
	"fsync closed":    "fsync DIR/f: file already closed",
	"a NUL in a path": "stat a\x00b: invalid argument",
	"a done context":  "unlink DIR/f: context canceled",
	"no reactor":      "stat DIR/f: uv: nil reactor: invalid argument",
	"fsevent":         "uv: NewFSEvent: lstat DIR/missing: no such file or directory",
	"fs_poll":         "fs_poll DIR/missing: uv_fs_poll: ENOENT",
}

// TestFSErrorTextsAcrossDrivers: the same failing file system request
// gives, on both drivers, an error of the same text (naming the same
// operation and path, and the errno by libuv's name), matching the same
// errno and sentinels, with the same chain of types. Each driver's texts
// are also held to fsErrWant, so a build with one driver (no cgo) keeps
// the same shape.
func TestFSErrorTextsAcrossDrivers(t *testing.T) {
	seen := map[reactor.Driver]map[string]fsErrSeen{}
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		got := fsFailures(t, uv.UvtNewReactorOn(t, d))
		seen[d] = got
		texts := map[string]string{}
		for name, s := range got {
			texts[name] = s.Text
			if want := fsErrWant[name]; strings.HasPrefix(s.Text, want+" (") {
				texts[name] = want // libuv's message after it may be the errno's own
			}
			if s.Errno == 0 && !s.Canceled && !s.Closed {
				t.Errorf("%s: %q matches no errno", name, s.Text)
			}
		}
		if diff := cmp.Diff(fsErrWant, texts); diff != "" {
			t.Errorf("error texts (-want +got):\n%s", diff)
		}
	})
	if len(seen) < 2 {
		t.Logf("%d driver in this build (no cgo): the drivers are held to the table, not compared with each other", len(seen))
		return
	}
	if diff := cmp.Diff(seen[reactor.DriverLibuv], seen[reactor.DriverGo]); diff != "" {
		t.Errorf("the same failing requests differ between the drivers (-libuv +go):\n%s", diff)
	}
}

// TestFSRequestLifecycle follows one request through its life on each
// driver and compares it with the same expectation: it runs from
// submission (Start and Stop change nothing), completes once with the
// bytes read on the loop goroutine, is closed then, replays its result to
// a late subscriber and refuses what a closed event refuses.
func TestFSRequestLifecycle(t *testing.T) {
	type step struct {
		Name  string
		State string
		Refs  int
		Heard []string // the notifications so far
	}
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		path := filepath.Join(t.TempDir(), "f")
		uv.UvtMust(t, os.WriteFile(path, []byte("lifecycle"), 0o600))
		osf, err := os.Open(path)
		uv.UvtMust(t, err)
		defer osf.Close()
		var q *uv.FSRequest[[]byte]
		var heard []string
		listen := func(who string) func(event.Event, any, error) {
			return func(_ event.Event, res any, err error) {
				b, _ := res.([]byte)
				heard = append(heard, fmt.Sprintf("%s: %q %v on loop %v", who, b, err, u.Owner().Owned()))
			}
		}
		var got []step
		note := func(name string) {
			got = append(got, step{name, event.StateOf(q).String(), eventkind.LoopRefs(q), append([]string(nil), heard...)})
		}
		// Holding the reactor, nothing lands (on the pure-Go driver, any
		// operation from another goroutine would otherwise deliver it).
		uv.UvtMust(t, u.Call(func() {
			var err error
			q, err = uv.UvtFSRead(u.Reactor, osf.Fd())
			uv.UvtMust(t, err)
			_, err = event.Subscribe(q, listen("subscriber"))
			uv.UvtMust(t, err)
			note("submitted")
			uv.UvtMust(t, q.Start())
			note("Start")
			uv.UvtMust(t, q.Stop())
			note("Stop")
		}))
		uv.UvtMust(t, u.Run(context.Background())) // returns once the request is done
		note("Run")
		_, err = event.Subscribe(q, listen("late"))
		uv.UvtMust(t, err)
		note("late Subscribe")
		if err := q.Start(); !errors.Is(err, event.ErrClosed) {
			t.Errorf("Start after completion = %v, want ErrClosed", err)
		}
		uv.UvtMust(t, q.Close())
		q.Dispose()
		note("Close, Dispose")
		result := "subscriber: \"lifecycle\" <nil> on loop true"
		late := "late: \"lifecycle\" <nil> on loop true"
		want := []step{
			{"submitted", "created", 0, nil},
			{"Start", "created", 0, nil},
			{"Stop", "created", 0, nil},
			{"Run", "closed", 0, []string{result}},
			{"late Subscribe", "closed", 0, []string{result, late}},
			{"Close, Dispose", "closed", 0, []string{result, late}},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("lifecycle differs (-want +got):\n%s", diff)
		}
		if f := q.Flags(); !f.Has(event.GoOwned | event.Closed) {
			t.Errorf("flags %v, want GoOwned and Closed", f)
		}
		uv.UvtShutdown(t, u, false)
	})
}

// eachDriverCounted runs fn on each driver with a fresh reactor and the
// goroutine and descriptor counts taken before it was made, for
// UvtNoLeaks once it is closed.
func eachDriverCounted(t *testing.T, fn func(t *testing.T, u *uv.UvtReactor, base, fds int)) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		base, fds := uv.UvtBaseline(t)
		fn(t, uv.UvtNewReactorOn(t, d), base, fds)
	})
}

// holdPool fills the pool that runs file operations with opens of a FIFO
// nobody writes to: each blocks its worker until release opens the
// writing end. Requests submitted after them wait in the queue. started
// reports whether one of the opens has begun (a reader waits on the FIFO).
func holdPool(t *testing.T, u *uv.UvtReactor) (blockers []*uv.FSRequest[*uv.File], started func() bool, release func() (done func())) {
	t.Helper()
	fifo := filepath.Join(t.TempDir(), "fifo")
	uv.UvtMust(t, unix.Mkfifo(fifo, 0o600))
	for range uv.UvtPoolSize() {
		q, err := uv.UvtFSOpen(u.Reactor, fifo, unix.O_RDONLY)
		uv.UvtMust(t, err)
		blockers = append(blockers, q)
	}
	writer := -1
	// Opening the writing end without blocking succeeds only while a
	// reader is in the FIFO; it also lets every open of it go through.
	started = func() bool {
		if writer < 0 {
			writer, _ = unix.Open(fifo, unix.O_WRONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		}
		return writer >= 0
	}
	release = func() func() {
		if writer < 0 {
			var err error
			writer, err = unix.Open(fifo, unix.O_RDWR|unix.O_CLOEXEC, 0) // never blocks on Linux
			uv.UvtMust(t, err)
		}
		return func() { unix.Close(writer) }
	}
	return blockers, started, release
}

// letPoolGo lets holdPool's opens through and waits until all of them
// have completed.
func letPoolGo(t *testing.T, blockers []*uv.FSRequest[*uv.File], release func() (done func())) {
	t.Helper()
	done := release()
	defer done()
	var opens []event.Event
	for _, q := range blockers {
		opens = append(opens, q)
	}
	if _, err := event.Await(waitCtx(t), event.All().IgnoreErrors(), opens...); err != nil {
		t.Fatal(err)
	}
}

// poolHeld reports whether every worker of the pool is blocked in its
// open of holdPool's FIFO, read from the threads' current system calls
// (/proc/self/task/*/syscall) rather than by opening the writing end,
// which would let the opens through.
func poolHeld() bool {
	tasks, _ := filepath.Glob("/proc/self/task/*/syscall")
	in := 0
	for _, name := range tasks {
		b, err := os.ReadFile(name)
		if err == nil && strings.HasPrefix(string(b), strconv.Itoa(unix.SYS_OPENAT)+" ") {
			in++
		}
	}
	return in >= uv.UvtPoolSize()
}

// TestFSRequestCloseMidflight closes requests before they complete, on
// each driver: a write still queued (it never runs: the file stays empty)
// and opens already running (their subscribers hear ErrClosed, and the
// descriptors they give all the same are closed). Nothing is left.
func TestFSRequestCloseMidflight(t *testing.T) {
	eachDriverCounted(t, func(t *testing.T, u *uv.UvtReactor, base, fds int) {
		path := filepath.Join(t.TempDir(), "target")
		stop := uv.UvtServe(t, u)
		f, err := uv.OpenFile(context.Background(), u.Reactor, path, os.O_RDWR|os.O_CREATE, 0o600)
		uv.UvtMust(t, err)
		stop()
		blockers, started, release := holdPool(t, u)
		w, err := f.WriteAsync(context.Background(), []byte("must not be written"), 0)
		uv.UvtMust(t, err)
		var heard []string
		evs := []event.Event{}
		for _, q := range blockers {
			evs = append(evs, q)
		}
		for i, q := range append(evs, w) {
			event.Subscribe(q, func(_ event.Event, res any, err error) {
				heard = append(heard, fmt.Sprintf("%d: %v %v", i, res, errors.Is(err, event.ErrClosed)))
			})
		}
		// Holding the reactor, nothing lands: the pool's outcomes queue up
		// (on the pure-Go driver, any other goroutine's operation would
		// otherwise run them).
		uv.UvtMust(t, u.Call(func() {
			uv.UvtMust(t, w.Close())
			uv.UvtWaitFor(t, "an open to begin", started)
			for _, q := range blockers {
				uv.UvtMust(t, q.Close())
			}
		}))
		want := []string{fmt.Sprintf("%d: <nil> true", len(blockers))} // the write was closed first
		for i := range blockers {
			want = append(want, fmt.Sprintf("%d: <nil> true", i))
		}
		if diff := cmp.Diff(want, heard); diff != "" {
			t.Errorf("notifications differ (-want +got):\n%s", diff)
		}
		done := release()
		uv.UvtMust(t, u.Run(context.Background())) // until every operation has landed
		done()
		if onDisk, _ := os.ReadFile(path); len(onDisk) != 0 {
			t.Errorf("the closed write ran: the file holds %q", onDisk)
		}
		if len(heard) != len(want) {
			t.Errorf("%d notifications after the operations landed, want %d", len(heard), len(want))
		}
		stop = uv.UvtServe(t, u)
		uv.UvtMust(t, f.Close())
		stop()
		uv.UvtShutdown(t, u, false)
		uv.UvtNoLeaks(t, base, fds)
	})
}

// TestFSRequestsAtReactorClose: the reactor's Close closes the requests in
// flight (their subscribers hear ErrClosed inside it), on each driver; the
// operations that were running finish, and what they opened is closed.
func TestFSRequestsAtReactorClose(t *testing.T) {
	eachDriverCounted(t, func(t *testing.T, u *uv.UvtReactor, base, fds int) {
		blockers, _, release := holdPool(t, u)
		var closedHeard atomic.Int32
		allHeard := make(chan struct{})
		for _, q := range blockers {
			event.Subscribe(q, func(_ event.Event, _ any, err error) {
				if errors.Is(err, event.ErrClosed) && int(closedHeard.Add(1)) == len(blockers) {
					close(allHeard)
				}
			})
		}
		closed := make(chan error, 1)
		go func() { closed <- u.Close() }() // on libuv, it waits for the running opens
		uv.UvtRecv(t, allHeard, "ErrClosed for every request")
		done := release()
		uv.UvtMust(t, uv.UvtRecv(t, closed, "the reactor's Close"))
		for _, q := range blockers {
			if !q.Flags().Has(event.Closed) {
				t.Errorf("%s is not closed after the reactor's Close", q.Info())
			}
		}
		uv.UvtShutdown(t, u, false)
		// The pure-Go driver's Close does not wait for the operations
		// running: the writing end stays open until they are over (their
		// pool goroutines gone), so that a late one does not block.
		uv.UvtNoLeaks(t, base, fds+1)
		done()
		uv.UvtNoLeaks(t, base, fds)
	})
}

// TestFileDroppedWithoutClose drops Files and their requests without Close
// or waiting, under GOGC=10, on each driver: the requests complete, nothing
// stays active, and the collector gives the descriptors back.
func TestFileDroppedWithoutClose(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	eachDriverCounted(t, func(t *testing.T, u *uv.UvtReactor, base, fds int) {
		dir := t.TempDir()
		stop := uv.UvtServe(t, u)
		for i := range 20 {
			f, err := uv.OpenFile(context.Background(), u.Reactor, filepath.Join(dir, fmt.Sprint(i)), os.O_RDWR|os.O_CREATE, 0o600)
			uv.UvtMust(t, err)
			_, err = f.WriteAsync(context.Background(), bytes.Repeat([]byte{byte(i)}, 4096), 0)
			uv.UvtMust(t, err)
			_, err = f.ReadAsync(context.Background(), 4096, 0)
			uv.UvtMust(t, err)
		}
		stop()
		uv.UvtMust(t, u.Run(context.Background()))
		if got := u.Stats().Active; got != 0 {
			t.Errorf("Active = %d after Run, want 0", got)
		}
		uv.UvtShutdown(t, u, false)
		uv.UvtNoLeaks(t, base, fds)
	})
}

// TestFileConcurrent uses one File from many goroutines on each driver
// (run it with -race): writes and reads at distinct offsets, and requests
// closed as they complete, each notified exactly once.
func TestFileConcurrent(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		f, err := uv.OpenFile(context.Background(), u.Reactor, filepath.Join(t.TempDir(), "f"), os.O_RDWR|os.O_CREATE, 0o600)
		uv.UvtMust(t, err)
		const workers, block = 8, 4096
		var wg sync.WaitGroup
		var notified [workers]atomic.Int32
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				data := bytes.Repeat([]byte{byte('a' + w)}, block)
				if n, err := f.WriteAt(data, int64(w*block)); n != block || err != nil {
					t.Errorf("worker %d: WriteAt = %d, %v", w, n, err)
				}
				got := make([]byte, block)
				if n, err := f.ReadAt(got, int64(w*block)); n != block || err != nil || !bytes.Equal(got, data) {
					t.Errorf("worker %d: ReadAt = %d, %v", w, n, err)
				}
				q, err := f.ReadAsync(context.Background(), block, int64(w*block))
				if err != nil {
					t.Errorf("worker %d: ReadAsync: %v", w, err)
					return
				}
				event.Subscribe(q, func(_ event.Event, res any, err error) {
					if b, _ := res.([]byte); bytes.Equal(b, data) || errors.Is(err, event.ErrClosed) {
						notified[w].Add(1)
					}
				})
				q.Close() // races with its completion: one of the two is heard
			}()
		}
		wg.Wait() // a Close notifies in it, a completion before it
		for w := range workers {
			if n := notified[w].Load(); n != 1 {
				t.Errorf("worker %d's closed request was notified %d times, want once", w, n)
			}
		}
		uv.UvtMust(t, f.Close())
		stop()
		uv.UvtShutdown(t, u, false)
	})
}

// TestFSRequestInCoroutine awaits file requests from a cooperative
// coroutine on each driver: while one is in flight the reactor has work
// pending, so the coroutine's waits are never taken for a deadlock.
func TestFSRequestInCoroutine(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		path := filepath.Join(t.TempDir(), "f")
		uv.UvtMust(t, os.WriteFile(path, []byte("from a coroutine"), 0o600))
		osf, err := os.OpenFile(path, os.O_RDWR, 0)
		uv.UvtMust(t, err)
		defer osf.Close()
		co, err := reactor.Spawn(context.Background(), u.Reactor, func(ctx context.Context) (string, error) {
			var got []byte
			for range 3 { // one wait after another
				q, err := uv.UvtFSRead(u.Reactor, osf.Fd()) // 64 bytes at 0
				if err != nil {
					return "", err
				}
				out, err := event.Await(ctx, event.Any(), q)
				if err == nil {
					err = out[0].Err
				}
				if err != nil {
					return "", err
				}
				got = out[0].Result.([]byte)
			}
			return string(got), nil
		})
		uv.UvtMust(t, err)
		uv.UvtMust(t, u.Run(context.Background()))
		got, err := event.AwaitValue[string](context.Background(), co)
		if got != "from a coroutine" || err != nil {
			t.Errorf("the coroutine returned %q, %v", got, err)
		}
		uv.UvtShutdown(t, u, false)
	})
}

// BenchmarkFileReadAt reads 4 KiB blocks through File.ReadAt on each
// driver, from a goroutine other than the loop's: the round trip of one
// request (submission, the pool, delivery on a loop turn).
func BenchmarkFileReadAt(b *testing.B) {
	for _, d := range conform.Drivers {
		b.Run(d.String(), func(b *testing.B) {
			r := uv.UvtNewReactorOn(b, d).Reactor
			defer r.Close()
			go r.Serve(context.Background())
			path := filepath.Join(b.TempDir(), "f")
			uv.UvtMust(b, os.WriteFile(path, bytes.Repeat([]byte("x"), 1<<20), 0o600))
			f, err := uv.OpenFile(context.Background(), r, path, os.O_RDONLY, 0)
			uv.UvtMust(b, err)
			defer f.Close()
			buf := make([]byte, 4096)
			b.SetBytes(int64(len(buf)))
			b.ResetTimer()
			for i := range b.N {
				if _, err := f.ReadAt(buf, int64(i%256)*4096); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestFSRequestClosedByEarlierCompletion: two reads complete in one turn,
// and the callback of the first one dispatched closes the other, whose
// completion is still to come in the same turn. libuv has run that
// request's callback already and the shim has freed it: the close must not
// cancel it (uv_cancel on freed memory, or on another request made there
// since). The other read hears ErrClosed, its result is nobody's, and a
// write submitted from the callback runs. Repeated, since either read may
// be dispatched first.
func TestFSRequestClosedByEarlierCompletion(t *testing.T) {
	eachDriverCounted(t, func(t *testing.T, u *uv.UvtReactor, base, fds int) {
		name := filepath.Join(t.TempDir(), "f")
		uv.UvtMust(t, os.WriteFile(name, []byte("abcdef"), 0o600))
		stop := uv.UvtServe(t, u)
		f, err := uv.OpenFile(context.Background(), u.Reactor, name, os.O_RDWR, 0)
		uv.UvtMust(t, err)
		stop()
		for round := range 8 {
			r1, err := f.ReadAsync(context.Background(), 1, 0)
			uv.UvtMust(t, err)
			r2, err := f.ReadAsync(context.Background(), 1, 1)
			uv.UvtMust(t, err)
			// Once every worker is blocked behind the reads, both have
			// run: their completions wait for the same turn.
			blockers, _, release := holdPool(t, u)
			uv.UvtWaitFor(t, "the pool to be held", poolHeld)
			var first, closedHeard bool
			var w *uv.FSRequest[int]
			for _, pair := range [][2]*uv.FSRequest[[]byte]{{r1, r2}, {r2, r1}} {
				me, other := pair[0], pair[1]
				event.Subscribe(me, func(_ event.Event, _ any, err error) {
					if first || err != nil {
						if errors.Is(err, event.ErrClosed) {
							closedHeard = true
						}
						return
					}
					first = true
					if uv.UvtCancelable(other) {
						t.Errorf("round %d: a request whose completion is in this turn can still be cancelled", round)
					}
					w, err = f.WriteAsync(context.Background(), []byte("z"), 6)
					uv.UvtMust(t, err)
					uv.UvtMust(t, other.Close())
				})
			}
			uv.UvtMust(t, u.RunOnce(context.Background()))
			if !first || !closedHeard {
				t.Fatalf("round %d: after the turn: a read landed %v, the other heard ErrClosed %v", round, first, closedHeard)
			}
			done := release()
			uv.UvtMust(t, u.Run(context.Background()))
			done()
			for _, q := range blockers { // nobody took what the opens gave
				if f, ok, err := q.Outcome(); ok && err == nil {
					uv.UvtDropFile(f)
				}
			}
			if n, ok, err := w.Outcome(); !ok || n != 1 || err != nil {
				t.Errorf("round %d: the write made in the callback = %d, %v, %v; want 1, true, nil", round, n, ok, err)
			}
		}
		stop = uv.UvtServe(t, u)
		uv.UvtMust(t, f.Close())
		stop()
		uv.UvtShutdown(t, u, false)
		uv.UvtNoLeaks(t, base, fds)
	})
}

// TestFSRequestTypedResults: a write's request gives its count as an int
// and a read's its bytes as a []byte, through Await, Outcome, OnDone (a
// completed request replays to it) and the typed waits, taking a slice
// of requests as it is, on each driver.
func TestFSRequestTypedResults(t *testing.T) {
	type seen struct {
		Written      int
		WrittenOK    bool
		Read         string
		ReadOutcome  string
		OnDone       string
		AwaitAll     []string
		WriteErr     error
		ReadErr      error
		OnDoneOnLoop bool
	}
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		ctx := waitCtx(t)
		f, err := uv.OpenFile(ctx, u.Reactor, filepath.Join(t.TempDir(), "typed"), os.O_RDWR|os.O_CREATE, 0o600)
		uv.UvtMust(t, err)
		var got seen
		w, err := f.WriteAsync(context.Background(), []byte("hello typed"), 0)
		uv.UvtMust(t, err)
		got.Written, got.WriteErr = w.Await(ctx)
		_, got.WrittenOK, _ = w.Outcome()
		r, err := f.ReadAsync(context.Background(), 5, 0)
		uv.UvtMust(t, err)
		var b []byte
		b, got.ReadErr = r.Await(ctx)
		got.Read = string(b)
		b, _, _ = r.Outcome()
		got.ReadOutcome = string(b)
		var mu sync.Mutex
		done := make(chan struct{})
		_, err = r.OnDone(func(p []byte, err error) {
			mu.Lock()
			defer mu.Unlock()
			got.OnDone, got.OnDoneOnLoop = fmt.Sprintf("%q %v", p, err), u.Owner().Owned()
			close(done)
		})
		uv.UvtMust(t, err)
		<-done
		var reads []*uv.FSRequest[[]byte]
		for _, off := range []int64{0, 6} {
			q, err := f.ReadAsync(context.Background(), 5, off)
			uv.UvtMust(t, err)
			reads = append(reads, q)
		}
		all, err := event.AwaitAll(ctx, reads...)
		uv.UvtMust(t, err)
		for _, p := range all {
			got.AwaitAll = append(got.AwaitAll, string(p))
		}
		uv.UvtMust(t, f.Close())
		stop()
		mu.Lock()
		defer mu.Unlock()
		want := seen{
			Written: 11, WrittenOK: true, Read: "hello", ReadOutcome: "hello",
			OnDone: `"hello" <nil>`, OnDoneOnLoop: true, AwaitAll: []string{"hello", "typed"},
		}
		if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b error) bool { return errors.Is(a, b) })); diff != "" {
			t.Errorf("typed results differ (-want +got):\n%s", diff)
		}
		uv.UvtShutdown(t, u, false)
	})
}

// TestFSRequestAwaitEndsAndClose: a write queued behind a full pool is
// waited for with contexts that end first (the wait gives the context's
// error, the request goes on), then closed: the close cancels it (the file
// stays empty), Await gives an error matching event.ErrClosed, Outcome
// has none, and OnDone
// hears of it only with event.WithClose, on each driver.
func TestFSRequestAwaitEndsAndClose(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		path := filepath.Join(t.TempDir(), "target")
		stop := uv.UvtServe(t, u)
		f, err := uv.OpenFile(waitCtx(t), u.Reactor, path, os.O_RDWR|os.O_CREATE, 0o600)
		uv.UvtMust(t, err)
		blockers, _, release := holdPool(t, u)
		w, err := f.WriteAsync(context.Background(), []byte("must not be written"), 0)
		uv.UvtMust(t, err)
		var mu sync.Mutex
		var heard []string
		for _, name := range []string{"plain", "WithClose"} {
			var opts []event.OnOption
			if name == "WithClose" {
				opts = append(opts, event.WithClose)
			}
			_, err := w.OnDone(func(n int, err error) {
				mu.Lock()
				defer mu.Unlock()
				heard = append(heard, fmt.Sprintf("%s: %d %v", name, n, errors.Is(err, event.ErrClosed)))
			}, opts...)
			uv.UvtMust(t, err)
		}
		cancelled, cancel := context.WithCancel(context.Background())
		cancel()
		if n, err := w.Await(cancelled); n != 0 || !errors.Is(err, context.Canceled) {
			t.Errorf("Await(cancelled) = %d, %v; want 0, context.Canceled", n, err)
		}
		if w.Flags().Has(event.Closed) {
			t.Error("a wait whose context ended closed the request")
		}
		if n, ok, err := w.Outcome(); ok || n != 0 || err != nil {
			t.Errorf("Outcome of a queued write = %d, %v, %v; want 0, false, nil", n, ok, err)
		}
		uv.UvtMust(t, w.Close())
		if n, err := w.Await(waitCtx(t)); n != 0 || !errors.Is(err, event.ErrClosed) {
			t.Errorf("Await after Close = %d, %v; want 0, event.ErrClosed", n, err)
		}
		if n, ok, err := w.Outcome(); ok || n != 0 || err != nil {
			t.Errorf("Outcome after Close = %d, %v, %v; want none: it never completes", n, ok, err)
		}
		letPoolGo(t, blockers, release)
		uv.UvtMust(t, f.Close())
		stop()
		if onDisk, _ := os.ReadFile(path); len(onDisk) != 0 {
			t.Errorf("the closed write ran: the file holds %q", onDisk)
		}
		mu.Lock()
		defer mu.Unlock()
		if diff := cmp.Diff([]string{"WithClose: 0 true"}, heard); diff != "" {
			t.Errorf("OnDone heard (-want +got):\n%s", diff)
		}
		uv.UvtShutdown(t, u, false)
	})
}

// blockedFIFORead is a read request of u blocked on a FIFO nobody writes
// to (its File holds both ends), released at cleanup.
func blockedFIFORead(t *testing.T, u *uv.UvtReactor) *uv.FSRequest[[]byte] {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := uv.OpenFile(waitCtx(t), u.Reactor, fifo, os.O_RDWR, 0) // never blocks on Linux
	if err != nil {
		t.Fatal(err)
	}
	q, err := f.ReadAsync(context.Background(), 8, -1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0) // a reader is there: it does not block
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		w.Write([]byte("x"))
		ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
		defer cancel()
		if _, err := q.Await(ctx); err != nil {
			t.Errorf("the blocked read did not complete: %v", err)
		}
		f.Close()
	})
	return q
}

// TestFileRequestContextEndsBeforeRun: a File's read and write whose
// context ends while the pool has not started them never run (the write
// writes nothing, the read does not move the descriptor's position), and
// complete with the context's error in their *fs.PathError; on each
// driver.
func TestFileRequestContextEndsBeforeRun(t *testing.T) {
	eachDriverCounted(t, func(t *testing.T, u *uv.UvtReactor, base, fds int) {
		stop := uv.UvtServe(t, u)
		name := filepath.Join(t.TempDir(), "f")
		uv.UvtMust(t, os.WriteFile(name, []byte("abc"), 0o600))
		f, err := uv.OpenFile(context.Background(), u.Reactor, name, os.O_RDWR, 0)
		uv.UvtMust(t, err)
		blockers, _, release := holdPool(t, u)
		uv.UvtWaitFor(t, "the pool to be held", poolHeld)
		ctx, cancel := context.WithCancel(context.Background())
		w, err := f.WriteAsync(ctx, []byte("zz"), 0)
		uv.UvtMust(t, err)
		rd, err := f.ReadAsync(ctx, 1, -1)
		uv.UvtMust(t, err)
		cancel()
		var got []string
		for _, err := range []error{fsErr(w, nil), fsErr(rd, nil)} {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				got = append(got, fmt.Sprintf("%s %v: canceled %v", pe.Op, pe.Path == name, errors.Is(err, context.Canceled)))
			} else {
				got = append(got, fmt.Sprintf("%v", err))
			}
		}
		if diff := cmp.Diff([]string{"write true: canceled true", "read true: canceled true"}, got); diff != "" {
			t.Errorf("the requests whose context ended (-want +got):\n%s", diff)
		}
		letPoolGo(t, blockers, release)
		for _, q := range blockers {
			if bf, ok, err := q.Outcome(); ok && err == nil {
				uv.UvtMust(t, bf.Close())
			}
		}
		// Read at the descriptor's position: still the start.
		all, err := f.ReadAsync(context.Background(), 8, -1)
		uv.UvtMust(t, err)
		if b, err := all.Await(waitCtx(t)); string(b) != "abc" || err != nil {
			t.Errorf("read after the cancelled ones = %q, %v, want \"abc\", nil", b, err)
		}
		uv.UvtMust(t, f.Close())
		if onDisk, _ := os.ReadFile(name); string(onDisk) != "abc" {
			t.Errorf("the file holds %q, want \"abc\": the cancelled write ran", onDisk)
		}
		stop()
		uv.UvtShutdown(t, u, false)
		uv.UvtNoLeaks(t, base, fds)
	})
}
