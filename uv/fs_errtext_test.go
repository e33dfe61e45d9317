package uv_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

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
		"read a dir":      fsErr(dirFile.ReadAsync(1, 0)),
		"write read-only": fsErr(ro.WriteAsync([]byte("y"), 0)),
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
