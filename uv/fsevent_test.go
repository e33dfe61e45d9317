package uv_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/uvevent/uvevent/event"
	uvcgo "github.com/uvevent/uvevent/internal/cgo"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// fsCalls collects an FSEvent's notifications on the loop.
type fsCalls struct {
	got  []uv.FSEventResult
	errs []error
}

func watchFS(t testing.TB, u *uv.UvtReactor, path string, opts uv.FSEventOptions) (*uv.FSEvent, *fsCalls) {
	t.Helper()
	f, err := uv.NewFSEvent(u.Reactor, path, opts)
	if err != nil {
		t.Fatalf("NewFSEvent: %v", err)
	}
	c := &fsCalls{}
	event.Subscribe(f, func(_ event.Event, res any, err error) {
		if err != nil {
			c.errs = append(c.errs, err)
			return
		}
		c.got = append(c.got, res.(uv.FSEventResult))
	})
	return f, c
}

// seen reports whether a notification for name with all of events came.
func (c *fsCalls) seen(name string, events uv.FSEvents) bool {
	return slices.ContainsFunc(c.got, func(r uv.FSEventResult) bool { return r.Name == name && r.Events&events == events })
}

func mustWrite(t testing.TB, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

// Create, start, a file appears and changes, stop (nothing seen), restart,
// close.
func TestFSEventLifecycle(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		dir := t.TempDir()
		f, c := watchFS(t, u, dir, uv.FSEventOptions{})
		if got, want := f.Info(), fmt.Sprintf("FSEvent(path=%q)", dir); got != want {
			t.Errorf("Info = %q, want %q", got, want)
		}
		if err := f.Replay(event.NewCallback(func(event.Event, any, error) {})); !errors.Is(err, event.ErrNotReplayable) {
			t.Errorf("Replay = %v, want ErrNotReplayable (a watch stores no result)", err)
		}
		uv.UvtMust(t, f.Start())
		mustWrite(t, filepath.Join(dir, "a"), "1")
		uv.UvtTurnUntil(t, u, "a's creation and write", func() bool { return c.seen("a", uv.Rename) && c.seen("a", uv.Change) })
		uv.UvtMust(t, f.Stop())
		n := len(c.got)
		mustWrite(t, filepath.Join(dir, "b"), "1")
		uv.UvtFence(t, u)
		if len(c.got) != n {
			t.Errorf("a stopped watch reported %v", c.got[n:])
		}
		uv.UvtMust(t, f.Start())
		mustWrite(t, filepath.Join(dir, "c"), "1")
		uv.UvtTurnUntil(t, u, "c after restart", func() bool { return c.seen("c", uv.Rename) })
		if c.seen("b", 0) {
			t.Error("a change made while stopped was reported after restart")
		}
		uv.UvtMust(t, f.Close())
		if len(c.errs) != 1 || !errors.Is(c.errs[0], event.ErrClosed) {
			t.Errorf("errors %v, want the close", c.errs)
		}
		closeAndFinish(t, u)
	})
}

// A watched file reports changes under its own name.
func TestFSEventFile(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		path := filepath.Join(t.TempDir(), "watched")
		mustWrite(t, path, "1")
		f, c := watchFS(t, u, path, uv.FSEventOptions{})
		uv.UvtMust(t, f.Start())
		mustWrite(t, path, "2")
		uv.UvtTurnUntil(t, u, "the change", func() bool { return c.seen("watched", uv.Change) })
		closeAndFinish(t, u, f)
	})
}

// What a watch reports is libuv's mapping of inotify's records, on both
// drivers: a write or an attribute change is Change, any other record
// Rename, so an attribute change of a directory (inotify marks it IN_ISDIR)
// is both; a move is reported at both ends; a watched file is named by its
// own base name, also when it moves away (and then its watch ends, with
// ErrWatchGone).
func TestFSEventReports(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		dir := t.TempDir()
		file := filepath.Join(t.TempDir(), "watched")
		mustWrite(t, file, "0")
		d, dc := watchFS(t, u, dir, uv.FSEventOptions{})
		f, fc := watchFS(t, u, file, uv.FSEventOptions{})
		uv.UvtMust(t, d.Start())
		uv.UvtMust(t, f.Start())

		a, b, sub := filepath.Join(dir, "a"), filepath.Join(dir, "b"), filepath.Join(dir, "sub")
		mustWrite(t, a, "1")
		uv.UvtMust(t, os.Chmod(a, 0o640))
		uv.UvtMust(t, os.Rename(a, b))
		uv.UvtMust(t, os.Mkdir(sub, 0o700))
		uv.UvtMust(t, os.Chmod(sub, 0o750))
		uv.UvtMust(t, os.Remove(b))
		uv.UvtMust(t, os.Remove(sub))
		uv.UvtMust(t, os.Mkdir(filepath.Join(dir, "end"), 0o700))

		mustWrite(t, file, "1")
		uv.UvtMust(t, os.Chmod(file, 0o640))
		uv.UvtMust(t, os.Rename(file, file+".old"))

		uv.UvtTurnUntil(t, u, "the last reports", func() bool { return dc.seen("end", uv.Rename) && fc.seen("watched", uv.Rename) })
		uv.UvtFence(t, u)
		r, c := uv.Rename, uv.Change
		want := []uv.FSEventResult{
			{"a", r}, {"a", c}, {"a", c}, {"a", r}, {"b", r},
			{"sub", r}, {"sub", r | c}, {"b", r}, {"sub", r}, {"end", r},
		}
		if diff := cmp.Diff(want, dc.got); diff != "" {
			t.Errorf("the directory's reports (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]uv.FSEventResult{{"watched", c}, {"watched", c}, {"watched", r}}, fc.got); diff != "" {
			t.Errorf("the file's reports (-want +got):\n%s", diff)
		}
		if len(dc.errs) != 0 {
			t.Errorf("the directory's errors: %v", dc.errs)
		}
		// The file moved away: its watch's last word is that it is gone.
		if len(fc.errs) != 1 || !errors.Is(fc.errs[0], uv.ErrWatchGone) {
			t.Errorf("the file's errors: %v, want ErrWatchGone once", fc.errs)
		}
		closeAndFinish(t, u, d, f)
	})
}

// Two watches of one directory (one inotify watch on the pure-Go driver,
// as in libuv): each reports; stopping one, or closing it from the other's
// callback, leaves the other reporting.
func TestFSEventShared(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		dir := t.TempDir()
		f, fc := watchFS(t, u, dir, uv.FSEventOptions{})
		g, gc := watchFS(t, u, dir, uv.FSEventOptions{})
		uv.UvtMust(t, f.Start())
		uv.UvtMust(t, g.Start())
		if n := u.Stats().Handles["fsevent"]; n != 2 {
			t.Errorf(`Stats().Handles["fsevent"] = %d, want 2`, n)
		}
		if n := u.Stats().Handles["inotify"]; u.Driver() == reactor.DriverGo && n != 1 {
			t.Errorf(`pure-Go driver: Stats().Handles["inotify"] = %d, want the one descriptor`, n)
		}
		mustWrite(t, filepath.Join(dir, "x"), "")
		uv.UvtTurnUntil(t, u, "x in both", func() bool { return fc.seen("x", uv.Rename) && gc.seen("x", uv.Rename) })

		uv.UvtMust(t, f.Stop())
		mustWrite(t, filepath.Join(dir, "y"), "")
		uv.UvtTurnUntil(t, u, "y in the one started", func() bool { return gc.seen("y", uv.Rename) })
		uv.UvtFence(t, u)
		if fc.seen("y", 0) {
			t.Error("the stopped watch reported y")
		}

		uv.UvtMust(t, f.Start())
		closed := 0
		event.Subscribe(g, func(event.Event, any, error) {
			if closed++; closed == 1 {
				f.Close()
			}
		})
		mustWrite(t, filepath.Join(dir, "z"), "")
		uv.UvtTurnUntil(t, u, "z in g", func() bool { return gc.seen("z", uv.Rename) })
		mustWrite(t, filepath.Join(dir, "w"), "")
		uv.UvtTurnUntil(t, u, "w in g", func() bool { return gc.seen("w", uv.Rename) })
		uv.UvtFence(t, u)
		if fc.seen("w", 0) || len(fc.errs) != 1 || !errors.Is(fc.errs[0], event.ErrClosed) {
			t.Errorf("the watch closed by the other's callback: reports %v, errors %v; want only the close", fc.got, fc.errs)
		}
		closeAndFinish(t, u, g)
	})
}

// A path that does not exist is refused (fs.ErrNotExist), at creation or,
// when removed since, at Start; the reactor goes on.
func TestFSEventBadInput(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		dir := t.TempDir()
		for _, p := range []string{filepath.Join(dir, "missing"), filepath.Join(dir, "missing", "deeper")} {
			if f, err := uv.NewFSEvent(u.Reactor, p, uv.FSEventOptions{}); !errors.Is(err, fs.ErrNotExist) || !errors.Is(err, syscall.ENOENT) || f != nil {
				t.Errorf("NewFSEvent(%s) = %v, %v; want ErrNotExist", p, f, err)
			}
		}
		if _, err := uv.NewFSEvent(u.Reactor, "", uv.FSEventOptions{}); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("empty path: %v", err)
		}
		gone := filepath.Join(dir, "gone")
		uv.UvtMust(t, os.Mkdir(gone, 0o700))
		f, _ := watchFS(t, u, gone, uv.FSEventOptions{})
		uv.UvtMust(t, os.Remove(gone))
		if err := f.Start(); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Start on a removed path = %v, want ErrNotExist", err)
		}
		if s := u.Stats(); s.Active != 0 {
			t.Errorf("Active after a failed Start = %d", s.Active)
		}
		g, c := watchFS(t, u, dir, uv.FSEventOptions{})
		uv.UvtMust(t, g.Start())
		mustWrite(t, filepath.Join(dir, "x"), "")
		uv.UvtTurnUntil(t, u, "a working watch after the failures", func() bool { return c.seen("x", uv.Rename) })
		closeAndFinish(t, u, f, g)
	})
}

// The error past the inotify limit, as each driver builds it
// (TestFSEventWatchLimit reaches the limit for real where user namespaces
// can be made).
func TestFSEventWatchLimitError(t *testing.T) {
	for _, cause := range []error{
		uvcgo.ErrorOf("uv_fs_event_start", -int(syscall.ENOSPC)), // libuv's
		os.NewSyscallError("inotify_add_watch", syscall.ENOSPC),  // the pure-Go driver's
	} {
		err := uv.UvtWatchError("/some/dir", cause)
		if !errors.Is(err, uv.ErrWatchLimit) || !errors.Is(err, syscall.ENOSPC) {
			t.Errorf("%v: want ErrWatchLimit and ENOSPC", err)
		}
		t.Logf("past the limit: %v", err)
	}
}

// Recursive: changes below the root are named by their path; a directory
// made later is watched too, one removed is dropped.
func TestFSEventRecursive(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		root := t.TempDir()
		uv.UvtMust(t, os.MkdirAll(filepath.Join(root, "s1", "s2"), 0o700))
		f, c := watchFS(t, u, root, uv.FSEventOptions{Recursive: true})
		uv.UvtMust(t, f.Start())
		if diff := cmp.Diff([]string{"s1", filepath.Join("s1", "s2")}, uv.UvtWatchedDirs(f)); diff != "" {
			t.Errorf("watched (-want +got):\n%s", diff)
		}
		if got, want := f.Info(), fmt.Sprintf("FSEvent(path=%q, recursive, watches=3)", root); got != want {
			t.Errorf("Info = %q, want %q", got, want)
		}
		deep := filepath.Join("s1", "s2", "f")
		mustWrite(t, filepath.Join(root, deep), "1")
		uv.UvtTurnUntil(t, u, deep, func() bool { return c.seen(deep, uv.Rename) })

		uv.UvtMust(t, os.Mkdir(filepath.Join(root, "new"), 0o700))
		uv.UvtTurnUntil(t, u, "new", func() bool { return c.seen("new", uv.Rename) })
		later := filepath.Join("new", "g")
		mustWrite(t, filepath.Join(root, later), "1")
		uv.UvtTurnUntil(t, u, later, func() bool { return c.seen(later, uv.Rename) })

		uv.UvtMust(t, os.RemoveAll(filepath.Join(root, "s1")))
		uv.UvtTurnUntil(t, u, "s1's removal", func() bool { return c.seen("s1", uv.Rename) && len(uv.UvtWatchedDirs(f)) == 1 })
		if diff := cmp.Diff([]string{"new"}, uv.UvtWatchedDirs(f)); diff != "" {
			t.Errorf("watched after the removal (-want +got):\n%s", diff)
		}
		if len(c.errs) != 0 {
			t.Errorf("errors: %v", c.errs)
		}
		// Stop drops the child watches; their handles are freed.
		uv.UvtMust(t, f.Stop())
		uv.UvtTurnUntil(t, u, "the children's close callbacks", func() bool { return uv.UvtFSHandles(u) == 1 })
		closeAndFinish(t, u, f)
	})
}

// A recursive watch's reports, in full, on both drivers: names are paths
// below the root, a directory made later is watched once its creation is
// seen, and a directory's own end (named by its base name in libuv's
// record) is not reported twice: its parent's watch reports it.
func TestFSEventRecursiveReports(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		root := t.TempDir()
		uv.UvtMust(t, os.Mkdir(filepath.Join(root, "s"), 0o700))
		f, c := watchFS(t, u, root, uv.FSEventOptions{Recursive: true})
		uv.UvtMust(t, f.Start())
		in := func(p ...string) string { return filepath.Join(append([]string{root}, p...)...) }

		mustWrite(t, in("s", "f"), "1")
		uv.UvtMust(t, os.Mkdir(in("s", "t"), 0o700))
		uv.UvtTurnUntil(t, u, "s/t", func() bool { return c.seen(filepath.Join("s", "t"), uv.Rename) })
		mustWrite(t, in("s", "t", "g"), "1")
		uv.UvtMust(t, os.Remove(in("s", "t", "g")))
		uv.UvtMust(t, os.Remove(in("s", "t")))
		uv.UvtMust(t, os.Mkdir(in("end"), 0o700))
		uv.UvtTurnUntil(t, u, "end", func() bool { return c.seen("end", uv.Rename) })
		uv.UvtFence(t, u)

		r, ch := uv.Rename, uv.Change
		sf, st, stg := filepath.Join("s", "f"), filepath.Join("s", "t"), filepath.Join("s", "t", "g")
		want := []uv.FSEventResult{
			{sf, r}, {sf, ch}, {st, r}, {stg, r}, {stg, ch}, {stg, r}, {st, r}, {"end", r},
		}
		if diff := cmp.Diff(want, c.got); diff != "" {
			t.Errorf("reports (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{"end", "s"}, uv.UvtWatchedDirs(f)); diff != "" {
			t.Errorf("watched (-want +got):\n%s", diff)
		}
		if len(c.errs) != 0 {
			t.Errorf("errors: %v", c.errs)
		}
		closeAndFinish(t, u, f)
	})
}

// Close while busy: a recursive watch closed from its callback while
// changes pour in, another by the reactor's Close.
func TestFSEventCloseWhileBusy(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		root := t.TempDir()
		uv.UvtMust(t, os.MkdirAll(filepath.Join(root, "a", "b"), 0o700))
		f, err := uv.NewFSEvent(u.Reactor, root, uv.FSEventOptions{Recursive: true})
		uv.UvtMust(t, err)
		calls := 0
		event.Subscribe(f, func(ev event.Event, _ any, err error) {
			calls++
			ev.Close()
		})
		uv.UvtMust(t, f.Start())
		g, gc := watchFS(t, u, root, uv.FSEventOptions{Recursive: true})
		uv.UvtMust(t, g.Start())
		for i := range 20 {
			mustWrite(t, filepath.Join(root, "a", "b", fmt.Sprint(i)), "x")
		}
		uv.UvtTurnUntil(t, u, "the self-close", func() bool { return f.Flags().Has(event.Closed) })
		if calls != 1 {
			t.Errorf("the closing callback ran %d times, want once", calls)
		}
		uv.UvtShutdown(t, u, false)
		if len(gc.errs) != 1 || !errors.Is(gc.errs[0], event.ErrClosed) {
			t.Errorf("the other watch's errors: %v, want the reactor's close", gc.errs)
		}
	})
}

// A callback that closes every watch while records pour in: the rest of
// the records reach nobody, nothing is left, and a new watch works (on the
// pure-Go driver, on a new inotify descriptor).
func TestFSEventCloseAllFromCallback(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		dir := t.TempDir()
		f, fc := watchFS(t, u, dir, uv.FSEventOptions{})
		g, gc := watchFS(t, u, dir, uv.FSEventOptions{})
		event.Subscribe(f, func(event.Event, any, error) {
			f.Close()
			g.Close()
		})
		uv.UvtMust(t, f.Start())
		uv.UvtMust(t, g.Start())
		for i := range 20 {
			mustWrite(t, filepath.Join(dir, fmt.Sprint(i)), "x")
		}
		uv.UvtTurnUntil(t, u, "the closes", func() bool { return g.Flags().Has(event.Closed) })
		uv.UvtTurnUntil(t, u, "nothing left", func() bool { return uv.UvtFSHandles(u) == 0 && len(u.Stats().Handles) == 0 })
		uv.UvtFence(t, u)
		if len(fc.got) != 1 || len(gc.got) != 0 {
			t.Errorf("reports after the closes: f %v, g %v; want f's first only", fc.got, gc.got)
		}
		h, hc := watchFS(t, u, dir, uv.FSEventOptions{})
		uv.UvtMust(t, h.Start())
		mustWrite(t, filepath.Join(dir, "again"), "")
		uv.UvtTurnUntil(t, u, "a new watch", func() bool { return hc.seen("again", uv.Rename) })
		closeAndFinish(t, u, h)
	})
}

// Watches dropped without Close under GOGC=10, some recursive ones started
// and stopped again (a started watch is the reactor's), leave no handle: no C handle on the libuv driver, no watch and no
// inotify descriptor on the pure-Go one.
func TestFSEventDroppedWithoutClose(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		root := t.TempDir()
		uv.UvtMust(t, os.MkdirAll(filepath.Join(root, "a", "b"), 0o700))
		var held []*uv.FSEvent // until counted
		uv.UvtMust(t, u.Call(func() {
			for i := range 300 {
				opts := uv.FSEventOptions{Recursive: i%2 == 0}
				f, err := uv.NewFSEvent(u.Reactor, root, opts)
				if err != nil {
					t.Error(err)
					return
				}
				if i%3 == 0 {
					f.Start()
				}
				held = append(held, f)
			}
		}))
		if n := uv.UvtFSHandles(u); n <= 300 {
			t.Errorf("fs handles = %d, want the roots and the children", n)
		}
		if s := u.Stats(); s.Active != 100 {
			t.Errorf("Active = %d, want the 100 started", s.Active)
		}
		uv.UvtMust(t, u.Call(func() {
			for i, f := range held {
				if i%3 == 0 {
					f.Stop()
				}
			}
		}))
		held = nil
		runtime.GC()
		uv.UvtCollectUntil(t, u, "every dropped watch's handles", func() bool {
			s := u.Stats()
			return uv.UvtFSHandles(u) == 0 && s.Active == 0 && len(s.Handles) == 0
		})
		uv.UvtShutdown(t, u, false)
	})
}

// The inotify limit, reached for real: the test binary runs itself again
// in a user namespace of its own, where the limit on watches
// (/proc/sys/user/max_inotify_watches, counted per namespace) can be set
// to 4 without touching the machine's.
func TestFSEventWatchLimit(t *testing.T) {
	if os.Getenv("UVEVENT_INOTIFY_LIMIT_CHILD") == "1" {
		if err := os.WriteFile("/proc/sys/user/max_inotify_watches", []byte("4"), 0); err != nil {
			t.Skipf("cannot set this namespace's limit: %v", err)
		}
		uv.UvtEachDriver(t, watchLimitChild)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestFSEventWatchLimit$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), "UVEVENT_INOTIFY_LIMIT_CHILD=1")
	if cmd.SysProcAttr = userNamespaceAttr(); cmd.SysProcAttr == nil {
		t.Skipf("no user namespace on %s: the limit is checked only by TestFSEventWatchLimitError", runtime.GOOS)
	}
	out, err := cmd.CombinedOutput()
	if errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOSPC) {
		t.Skipf("cannot make a user namespace here (%v): the limit is checked only by TestFSEventWatchLimitError", err)
	}
	if strings.Contains(string(out), "--- SKIP: TestFSEventWatchLimit (") {
		t.Skipf("the run in a user namespace skipped:\n%s", out)
	}
	if err != nil || !strings.Contains(string(out), "--- PASS: TestFSEventWatchLimit (") {
		t.Fatalf("the run in a user namespace: %v\n%s", err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, "limit:") {
			t.Log(strings.TrimSpace(line))
		}
	}
}

// watchLimitChild runs in the user namespace, at most 4 watches, on each
// driver in turn (the watches of one are gone with its reactor).
func watchLimitChild(t *testing.T, u *uv.UvtReactor) {
	big := t.TempDir()
	for i := range 6 {
		uv.UvtMust(t, os.Mkdir(filepath.Join(big, fmt.Sprint("d", i)), 0o700))
	}
	f, _ := watchFS(t, u, big, uv.FSEventOptions{Recursive: true})
	err := f.Start()
	if !errors.Is(err, uv.ErrWatchLimit) || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Start of 7 watches under a limit of 4 = %v, want ErrWatchLimit and ENOSPC", err)
	}
	t.Logf("limit: Start: %v", err)
	if s := u.Stats(); s.Active != 0 {
		t.Errorf("Active after the failed Start = %d", s.Active)
	}
	uv.UvtTurnUntil(t, u, "the partial watches' close callbacks", func() bool { return uv.UvtFSHandles(u) == 1 })

	// The failed Start gave its watches back (f lives on, and with it the
	// reactor's inotify descriptor): within the limit at Start (3
	// watches); a fourth directory fits, a fifth is reported as an error
	// notification.
	small := t.TempDir()
	for i := range 2 {
		uv.UvtMust(t, os.Mkdir(filepath.Join(small, fmt.Sprint("s", i)), 0o700))
	}
	g, c := watchFS(t, u, small, uv.FSEventOptions{Recursive: true})
	uv.UvtMust(t, g.Start())
	uv.UvtMust(t, os.Mkdir(filepath.Join(small, "n1"), 0o700))
	uv.UvtTurnUntil(t, u, "n1", func() bool { return c.seen("n1", uv.Rename) })
	uv.UvtMust(t, os.Mkdir(filepath.Join(small, "n2"), 0o700))
	uv.UvtTurnUntil(t, u, "the limit's error", func() bool { return len(c.errs) > 0 })
	if !errors.Is(c.errs[0], uv.ErrWatchLimit) || !strings.Contains(c.errs[0].Error(), "n2") {
		t.Errorf("the fifth directory: %v, want ErrWatchLimit naming n2", c.errs[0])
	}
	t.Logf("limit: later directory: %v", c.errs[0])
	if !c.seen("n2", uv.Rename) {
		t.Error("n2's creation was not reported with the error")
	}
	closeAndFinish(t, u, f, g)
}

// A watch whose path is removed, moved away or replaced says so and ends:
// its last error matches ErrWatchGone and fs.ErrNotExist, it is stopped
// (Run can end), and a Start watches what is at the path again.
func TestFSEventRootGone(t *testing.T) {
	for _, c := range []struct {
		name string
		gone func(t *testing.T, dir, path string)
	}{
		{"removed", func(t *testing.T, _, path string) { uv.UvtMust(t, os.RemoveAll(path)) }},
		{"moved away", func(t *testing.T, dir, path string) { uv.UvtMust(t, os.Rename(path, filepath.Join(dir, "away"))) }},
		{"replaced", func(t *testing.T, dir, path string) {
			uv.UvtMust(t, os.Mkdir(filepath.Join(dir, "new"), 0o700))
			uv.UvtMust(t, os.RemoveAll(path))
			uv.UvtMust(t, os.Rename(filepath.Join(dir, "new"), path))
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
				dir := t.TempDir()
				path := filepath.Join(dir, "w")
				uv.UvtMust(t, os.Mkdir(path, 0o700))
				f, calls := watchFS(t, u, path, uv.FSEventOptions{Recursive: true})
				defer f.Close()
				uv.UvtMust(t, f.Start())
				c.gone(t, dir, path)
				uv.UvtTurnUntil(t, u, "the watch's end", func() bool { return len(calls.errs) > 0 })
				err := calls.errs[0]
				if !errors.Is(err, uv.ErrWatchGone) || !errors.Is(err, fs.ErrNotExist) {
					t.Fatalf("error = %v, want ErrWatchGone and fs.ErrNotExist", err)
				}
				if st := event.StateOf(f); st != event.Stopped {
					t.Errorf("after the end: %v, want stopped", st)
				}
				uv.UvtMust(t, u.Run(waitCtx(t))) // nothing keeps it going
				if c.name == "removed" {
					uv.UvtMust(t, os.Mkdir(path, 0o700))
				} else if c.name == "moved away" {
					return
				}
				uv.UvtMust(t, f.Start())
				mustWrite(t, filepath.Join(path, "again"), "1")
				uv.UvtTurnUntil(t, u, "a change after the restart", func() bool { return calls.seen("again", uv.Rename) })
			})
		})
	}
}

// A recursive watch re-watches a directory replaced at the same path: a
// file made in the new one is reported.
func TestFSEventRecursiveSubdirReplaced(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		root := t.TempDir()
		sub := filepath.Join(root, "sub")
		uv.UvtMust(t, os.Mkdir(sub, 0o700))
		f, calls := watchFS(t, u, root, uv.FSEventOptions{Recursive: true})
		defer f.Close()
		uv.UvtMust(t, f.Start())
		uv.UvtMust(t, os.Mkdir(filepath.Join(root, "next"), 0o700))
		// rename(2) replaces the empty sub (os.Rename refuses a directory there)
		uv.UvtMust(t, syscall.Rename(filepath.Join(root, "next"), sub))
		uv.UvtTurnUntil(t, u, "the swap", func() bool {
			return calls.seen("sub", uv.Rename) && calls.seen("next", uv.Rename) && slices.Equal([]string{"sub"}, uv.UvtWatchedDirs(f))
		})
		mustWrite(t, filepath.Join(sub, "x"), "1")
		uv.UvtTurnUntil(t, u, "a file in the new sub", func() bool { return calls.seen(filepath.Join("sub", "x"), uv.Rename) })
		if len(calls.errs) != 0 {
			t.Errorf("errors: %v", calls.errs)
		}
	})
}

// An attribute change of a directory below a recursive watch's root is
// reported once, by its path, as inotifywait reports it: its parent's
// watch names it; the directory's own watch, which libuv names by the
// directory's base name, adds no path that does not exist ("pre/pre").
// A file that really has its directory's name is still reported.
func TestFSEventRecursiveDirAttribute(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		root := t.TempDir()
		in := func(p ...string) string { return filepath.Join(append([]string{root}, p...)...) }
		uv.UvtMust(t, os.MkdirAll(in("a", "b"), 0o755))
		uv.UvtMust(t, os.Mkdir(in("pre"), 0o755))
		f, c := watchFS(t, u, root, uv.FSEventOptions{Recursive: true})
		uv.UvtMust(t, f.Start())
		count := func(name string) int {
			return len(slices.DeleteFunc(slices.Clone(c.got), func(r uv.FSEventResult) bool { return r.Name != name }))
		}
		mark := func(name string) {
			t.Helper()
			uv.UvtMust(t, os.Mkdir(in(name), 0o700))
			uv.UvtTurnUntil(t, u, name, func() bool { return c.seen(name, uv.Rename) })
			uv.UvtFence(t, u)
		}

		uv.UvtMust(t, os.Chmod(in("pre"), 0o700))
		now := time.Now()
		uv.UvtMust(t, os.Chtimes(in("pre"), now, now))
		uv.UvtMust(t, os.Chmod(in("a", "b"), 0o700))
		mark("end1")
		ab := filepath.Join("a", "b")
		if !c.seen("pre", uv.Change) || !c.seen(ab, uv.Change) {
			t.Errorf("the attribute changes of pre and a/b were not reported: %v", c.got)
		}
		for _, ghost := range []string{filepath.Join("pre", "pre"), filepath.Join("a", "b", "b")} {
			if n := count(ghost); n != 0 {
				t.Errorf("%q, a path that does not exist, reported %d times: %v", ghost, n, c.got)
			}
		}

		prepre := filepath.Join("pre", "pre")
		mustWrite(t, in("pre", "pre"), "1")
		mark("end2")
		if !c.seen(prepre, uv.Rename) {
			t.Errorf("the file pre/pre was not reported: %v", c.got)
		}
		before, pre := count(prepre), count("pre")
		uv.UvtMust(t, os.Chmod(in("pre"), 0o755))
		mark("end3")
		if n := count(prepre); n != before {
			t.Errorf("a chmod of pre reported the file pre/pre (%d reports, want %d): %v", n, before, c.got)
		}
		if n := count("pre"); n <= pre {
			t.Errorf("a chmod of pre was not reported: %v", c.got)
		}
		if len(c.errs) != 0 {
			t.Errorf("errors: %v", c.errs)
		}
		closeAndFinish(t, u, f)
	})
}

// missing lists the names of want not reported (with Rename) yet.
func (c *fsCalls) missing(want []string) []string {
	var out []string
	for _, name := range want {
		if !c.seen(name, uv.Rename) {
			out = append(out, name)
		}
	}
	return out
}

// waitAll turns the loop until every name of want was reported.
func waitAll(t *testing.T, u *uv.UvtReactor, c *fsCalls, what string, want []string) {
	t.Helper()
	uv.UvtTurnUntil(t, u, fmt.Sprintf("%s: %v", what, want), func() bool { return len(c.missing(want)) == 0 })
}

// endClean fails the test if the watch reported an error, and closes it.
func endClean(t *testing.T, u *uv.UvtReactor, f *uv.FSEvent, c *fsCalls) {
	t.Helper()
	if len(c.errs) != 0 {
		t.Errorf("errors: %v", c.errs)
	}
	closeAndFinish(t, u, f)
}

// A directory below the root removed and made again at the same path
// (ext4 then often gives it the removed one's inode number) is watched
// again: the files made in it before the loop saw the swap, and after, are
// reported.
func TestFSEventRecursiveSubdirRemadeSamePath(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		root := t.TempDir()
		sub := filepath.Join(root, "sub")
		uv.UvtMust(t, os.Mkdir(sub, 0o700))
		f, c := watchFS(t, u, root, uv.FSEventOptions{Recursive: true})
		uv.UvtMust(t, f.Start())
		uv.UvtMust(t, os.Remove(sub))
		uv.UvtMust(t, os.Mkdir(sub, 0o700))
		mustWrite(t, filepath.Join(sub, "early"), "1")
		waitAll(t, u, c, "a file made in the new directory", []string{filepath.Join("sub", "early")})
		mustWrite(t, filepath.Join(sub, "late"), "1")
		waitAll(t, u, c, "a file made after the swap was seen", []string{filepath.Join("sub", "late")})
		if diff := cmp.Diff([]string{"sub"}, uv.UvtWatchedDirs(f)); diff != "" {
			t.Errorf("watched (-want +got):\n%s", diff)
		}
		endClean(t, u, f, c)
	})
}

// A directory moved over one below the root is watched, and the files it
// brought are reported, as are those made in it later.
func TestFSEventRecursiveSubdirMovedOver(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		root := t.TempDir()
		sub, next := filepath.Join(root, "sub"), filepath.Join(root, "next")
		uv.UvtMust(t, os.Mkdir(sub, 0o700))
		f, c := watchFS(t, u, root, uv.FSEventOptions{Recursive: true})
		uv.UvtMust(t, f.Start())
		uv.UvtMust(t, os.MkdirAll(filepath.Join(next, "deep"), 0o700))
		mustWrite(t, filepath.Join(next, "x"), "1")
		mustWrite(t, filepath.Join(next, "deep", "y"), "1")
		// rename(2) replaces the empty sub (os.Rename refuses a directory there)
		uv.UvtMust(t, syscall.Rename(next, sub))
		waitAll(t, u, c, "the files the new sub brought", []string{
			"sub", filepath.Join("sub", "x"), filepath.Join("sub", "deep"), filepath.Join("sub", "deep", "y"),
		})
		mustWrite(t, filepath.Join(sub, "deep", "z"), "1")
		waitAll(t, u, c, "a file made in it later", []string{filepath.Join("sub", "deep", "z")})
		// next's watch ended (its move came before z's creation, in the
		// one queue of the watches) and its handle, closing, may not be
		// freed yet: the fence waits for its own close alone.
		uv.UvtFence(t, u)
		if diff := cmp.Diff([]string{"sub", filepath.Join("sub", "deep")}, uv.UvtWatchedDirs(f)); diff != "" {
			t.Errorf("watched (-want +got):\n%s", diff)
		}
		endClean(t, u, f, c)
	})
}

// A tree made at once below the root (mkdir -p and files in it, or made
// elsewhere and moved in) is reported whole: each file and directory in
// it, however fast it was made.
func TestFSEventRecursiveNewTree(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		root := t.TempDir()
		f, c := watchFS(t, u, root, uv.FSEventOptions{Recursive: true})
		uv.UvtMust(t, f.Start())
		abc := filepath.Join("a", "b", "c")
		uv.UvtMust(t, os.MkdirAll(filepath.Join(root, abc), 0o700))
		mustWrite(t, filepath.Join(root, abc, "f"), "1")
		mustWrite(t, filepath.Join(root, "a", "g"), "1")

		outside := filepath.Join(t.TempDir(), "m")
		uv.UvtMust(t, os.MkdirAll(filepath.Join(outside, "n"), 0o700))
		mustWrite(t, filepath.Join(outside, "n", "h"), "1")
		uv.UvtMust(t, os.Rename(outside, filepath.Join(root, "m")))

		waitAll(t, u, c, "the new trees", []string{
			"a", filepath.Join("a", "b"), abc, filepath.Join(abc, "f"), filepath.Join("a", "g"),
			"m", filepath.Join("m", "n"), filepath.Join("m", "n", "h"),
		})
		mustWrite(t, filepath.Join(root, abc, "later"), "1")
		mustWrite(t, filepath.Join(root, "m", "n", "later"), "1")
		waitAll(t, u, c, "files made later", []string{filepath.Join(abc, "later"), filepath.Join("m", "n", "later")})
		endClean(t, u, f, c)
	})
}

// Directories replaced at the same path over and over while the loop
// runs: every file made is reported, by the path it was made at or by the
// one its directory was moved to (reported twice is allowed, never lost).
func TestFSEventRecursiveReplaceStress(t *testing.T) {
	const n = 60
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		root := t.TempDir()
		sub := filepath.Join(root, "sub")
		f, c := watchFS(t, u, root, uv.FSEventOptions{Recursive: true})
		uv.UvtMust(t, f.Start())
		var done atomic.Bool
		errc := make(chan error, 1)
		go func() {
			// Set on the loop, which wakes it if it waits.
			defer u.Post(func() { done.Store(true) })
			for i := range n {
				// made, removed and made again (the removed one's inode
				// number again, on ext4), a file in it, moved away
				for _, step := range []func() error{
					func() error { return os.Mkdir(sub, 0o700) },
					func() error { return os.Remove(sub) },
					func() error { return os.Mkdir(sub, 0o700) },
					func() error { return os.WriteFile(filepath.Join(sub, fmt.Sprint("f", i)), nil, 0o600) },
					func() error { return os.Rename(sub, filepath.Join(root, fmt.Sprint("keep", i))) },
				} {
					if err := step(); err != nil {
						errc <- err
						return
					}
				}
			}
		}()
		lost := func() []string {
			var out []string
			for i := range n {
				name := fmt.Sprint("f", i)
				if !c.seen(filepath.Join("sub", name), uv.Rename) && !c.seen(filepath.Join(fmt.Sprint("keep", i), name), uv.Rename) {
					out = append(out, name)
				}
			}
			return out
		}
		var want []string
		for i := range n {
			want = append(want, fmt.Sprint("keep", i))
		}
		slices.Sort(want)
		ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
		defer cancel()
		for !done.Load() || len(lost()) != 0 || !slices.Equal(want, uv.UvtWatchedDirs(f)) {
			if err := u.RunOnce(ctx); err != nil {
				t.Fatalf("waiting for every file reported: %v; lost %v; watched %v", err, lost(), uv.UvtWatchedDirs(f))
			}
		}
		select {
		case err := <-errc:
			t.Fatal(err)
		default:
		}
		endClean(t, u, f, c)
	})
}
