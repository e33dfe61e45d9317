package uv_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/uvevent/uvevent/uv"
)

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
