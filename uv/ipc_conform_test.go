package uv_test

import (
	"regexp"
	"sync"
	"testing"
	"weak"

	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// conformIPC runs an IPC pipe through the table: its peer is the raw other
// end of a socket pair, which fires it by passing a connection (one end of
// a new socket pair) as another process would.
func conformIPC(t *testing.T) conform.Kind {
	var mu sync.Mutex
	peers := map[weak.Pointer[uv.IPC]]int{} // weak: the table drops its events
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, fd := range peers {
			unix.Close(fd)
		}
	})
	pass := func(peer int) error {
		sp, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer unix.Close(sp[0])
		defer unix.Close(sp[1])
		return unix.Sendmsg(peer, []byte{'c'}, unix.UnixRights(sp[0]), nil, 0)
	}
	return conform.Kind{
		Name: "ipc",
		New: func(r *reactor.Reactor) (event.Event, error) {
			fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
			if err != nil {
				return nil, err
			}
			p, err := uv.OpenIPC(r, fds[0])
			if err != nil {
				unix.Close(fds[0])
				unix.Close(fds[1])
				return nil, err
			}
			mu.Lock()
			peers[weak.Make(p)] = fds[1]
			mu.Unlock()
			return p, nil
		},
		Fire: func(ev event.Event) error {
			mu.Lock()
			peer := peers[weak.Make(ev.(*uv.IPC))]
			mu.Unlock()
			return pass(peer)
		},
		Detach: func(ev event.Event) func() error {
			mu.Lock()
			peer := peers[weak.Make(ev.(*uv.IPC))]
			mu.Unlock()
			return func() error { return pass(peer) }
		},
		Info: regexp.MustCompile(`^IPC\(fd=\d+, sent=\d+, received=\d+, failed=\d+\)$`),
	}
}
