package uv

import (
	"testing"

	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/eventkind"
)

// A Stop of a poll that only its proxies started takes the proxies' Start
// away: the started proxy is then polled for nothing and never told again.
// The poll watches the union of what its own Start and its started proxies
// ask for; a Stop takes away only the poll's own part.
func TestPollStopByNonStarterLeavesProxies(t *testing.T) {
	UvtEachDriver(t, func(t *testing.T, u *UvtReactor) {
		r := u.Reactor
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
		if err != nil {
			t.Fatal(err)
		}
		p, err := NewPoll(r, fds[0], Readable, PollOptions{})
		if err != nil {
			t.Fatal(err)
		}
		x, err := NewPollProxy(p, Readable)
		if err != nil {
			t.Fatal(err)
		}
		if err := x.Start(); err != nil {
			t.Fatal(err)
		}
		p.Stop()
		var polling PollEvents
		r.Call(func() { polling = p.e.polling })
		if polling != Readable || eventkind.LoopRefs(x) != 1 {
			t.Errorf("after the poll's Stop, a started proxy's poll polls for %v, want %v", polling, Readable)
		}
		r.Close()
		unix.Close(fds[0])
		unix.Close(fds[1])
	})
}
