package uv_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/uv"
)

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
