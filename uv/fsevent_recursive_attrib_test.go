package uv_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/uvevent/uvevent/uv"
)

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
