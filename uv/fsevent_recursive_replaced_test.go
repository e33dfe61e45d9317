package uv_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/uvevent/uvevent/uv"
)

// A directory below a recursive watch that is removed and made again (or
// moved away and replaced) before the loop sees the change is a new
// directory: the watch follows it, and no longer the old one. Keeping the
// old directory's watch left the new one unwatched (its changes never
// reported, without a word) and, for a directory moved away, reported the
// changes made in it, wherever it went, as changes below the root.
func TestFSEventRecursiveDirReplaced(t *testing.T) {
	for _, how := range []string{"removed", "moved away"} {
		t.Run(how, func(t *testing.T) {
			uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
				root, away := t.TempDir(), t.TempDir()
				sub := filepath.Join(root, "s")
				uv.UvtMust(t, os.MkdirAll(filepath.Join(sub, "deep"), 0o700))
				f, c := watchFS(t, u, root, uv.FSEventOptions{Recursive: true})
				uv.UvtMust(t, f.Start())

				// Replaced before any turn runs: the loop sees the old
				// directory's end and the new one's creation together.
				moved := filepath.Join(away, "s")
				if how == "removed" {
					uv.UvtMust(t, os.RemoveAll(sub))
				} else {
					uv.UvtMust(t, os.Rename(sub, moved))
				}
				uv.UvtMust(t, os.MkdirAll(filepath.Join(sub, "deep"), 0o700))
				uv.UvtTurnUntil(t, u, "s made again", func() bool { return c.seen("s", uv.Rename) })
				if diff := cmp.Diff([]string{"s", filepath.Join("s", "deep")}, uv.UvtWatchedDirs(f)); diff != "" {
					t.Errorf("watched (-want +got):\n%s", diff)
				}

				if how == "moved away" {
					// Changes in the old directory are not the root's.
					mustWrite(t, filepath.Join(moved, "old"), "1")
					mustWrite(t, filepath.Join(moved, "deep", "old"), "1")
				}
				in := filepath.Join("s", "f")
				deeper := filepath.Join("s", "deep", "g")
				mustWrite(t, filepath.Join(root, in), "1")
				mustWrite(t, filepath.Join(root, deeper), "1")
				uv.UvtTurnUntil(t, u, "changes in the new directory", func() bool {
					return c.seen(in, uv.Rename) && c.seen(deeper, uv.Rename)
				})
				// The old directory's records, had its watch been kept,
				// came before these, in inotify's queue.
				for _, r := range c.got {
					if filepath.Base(r.Name) == "old" {
						t.Errorf("reported %v, a change in the directory moved away", r)
					}
				}
				if len(c.errs) != 0 {
					t.Errorf("errors: %v", c.errs)
				}
				closeAndFinish(t, u, f)
			})
		})
	}
}
