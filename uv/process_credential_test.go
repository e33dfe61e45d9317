package uv_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/uvevent/uvevent/uv"
)

// fixtureForOthers returns a copy of the fixture name that another user
// can execute, wherever the checkout lives: a test that runs a child as
// another user (Credential) must not depend on the checkout's directory
// being open to that user (a home directory of mode 0700, a mktemp -d
// folder). The copy goes to a directory of its own under os.TempDir, mode
// 0755; when some directory above it is closed to others too, the test is
// skipped with the reason.
func fixtureForOthers(t *testing.T, name string) string {
	t.Helper()
	src, err := os.ReadFile(uv.UvtFixture(t, name))
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "uvevent-fixture-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, src, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, 0o755); err != nil { // whatever the umask
		t.Fatal(err)
	}
	for d := filepath.Dir(dir); ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm()&0o001 == 0 {
			t.Skipf("the temporary directory %s is under %s (mode %v), which other users cannot enter: set TMPDIR to a directory they can reach to run this test", dir, d, fi.Mode().Perm())
		}
		if d == filepath.Dir(d) {
			break
		}
	}
	return p
}

// Credential changes the user and group when this process may, and is
// EPERM when it may not. The program run is a copy outside the checkout,
// so that the test passes wherever the checkout lives.
func TestProcessCredential(t *testing.T) {
	cred := &syscall.Credential{Uid: 65534, Gid: 65534}
	opts := uv.ProcessOptions{Credential: cred, Stdout: uv.StdioPipe}
	if os.Geteuid() == 0 {
		opts.Args = []string{fixtureForOthers(t, "child.sh"), "ids"}
	} else {
		opts.Args = []string{uv.UvtFixture(t, "child.sh"), "ids"}
	}
	u := uv.UvtNewReactor(t)
	stop := uv.UvtServe(t, u)
	p, err := uv.StartProcess(u.Reactor, opts)
	switch {
	case os.Geteuid() != 0:
		if !errors.Is(err, syscall.EPERM) {
			t.Errorf("Credential as uid %d: %v, want EPERM", os.Geteuid(), err)
		}
	case err != nil:
		t.Errorf("Credential as root: %v", err)
	default:
		out, _ := io.ReadAll(p.Stdout())
		p.Stdout().Close()
		awaitOne(t, p)
		if got := strings.Fields(string(out)); !cmp.Equal(got, []string{"65534", "65534"}) {
			t.Errorf("ids = %q, want 65534 65534", got)
		}
	}
	stop()
	uv.UvtShutdown(t, u, false)
}
