package uv_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/uv"
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
