package uv_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// On the pure-Go driver a Unix socket name beginning with '@' is in the
// abstract namespace (golang.org/x/sys/unix's convention, as package
// net's): nothing of it is on disk, so Close removes no file — not one of
// that name in the working directory.
func TestListenerAbstractUnlinksNothing(t *testing.T) {
	u := uv.UvtNewReactorOn(t, reactor.DriverGo)
	t.Chdir(t.TempDir())
	name := fmt.Sprintf("@uvevent-test-%d", os.Getpid())
	uv.UvtMust(t, os.WriteFile(name, []byte("not a socket"), 0o600))
	ln, err := uv.Listen(u.Reactor, "unix", name)
	uv.UvtMust(t, err)
	uv.UvtMust(t, ln.Close())
	if _, err := os.Stat(name); err != nil {
		t.Errorf("the file %s after closing the abstract socket's listener: %v", name, err)
	}
	uv.UvtShutdown(t, u, false)
}
