package uv_test

import (
	"testing"

	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/uv"
)

// TestIOStaleReadiness: two polls ready in the same pass; the first
// callback to run closes the other poll and makes a new one over the same
// descriptor number (a fresh socket with nothing to read). What the closed
// descriptor had to report must not reach its successor: libuv drops the
// events of a closed watcher still waiting in the pass
// (uv__platform_invalidate_fd), and so must the pure-Go driver's poller.
// Its new poll would otherwise be told Readable with nothing to read (or,
// for a connect in flight on that number, that the connect completed).
func TestIOStaleReadiness(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		pair := func() [2]int {
			fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
			uv.UvtMust(t, err)
			return fds
		}
		a, b := pair(), pair()
		for _, p := range [][2]int{a, b} {
			_, err := unix.Write(p[1], []byte("x"))
			uv.UvtMust(t, err)
		}
		var peers []int // the write ends, and the fresh sockets' peers
		defer func() {
			for _, fd := range append(peers, a[1], b[1]) {
				unix.Close(fd)
			}
		}()
		swapped := make(chan struct{})
		spurious := 0 // loop-owned
		var successor *uv.Poll
		var polls [2]*uv.Poll
		onReady := func(other *int) func(event.Event, any, error) {
			return func(ev event.Event, res any, err error) {
				if err != nil || successor != nil {
					return // the close of the other poll, or a later readiness
				}
				num := polls[*other].FD()
				uv.UvtMust(t, polls[*other].Close()) // its descriptor is closed with it
				fresh := pair()
				peers = append(peers, fresh[1])
				if fresh[0] != num { // the lowest number free is usually the one just closed
					uv.UvtMust(t, unix.Dup3(fresh[0], num, unix.O_CLOEXEC))
					unix.Close(fresh[0])
				}
				p, err := uv.NewPoll(u.Reactor, num, uv.Readable, uv.PollOptions{CloseFD: true})
				uv.UvtMust(t, err)
				_, err = event.Subscribe(p, func(_ event.Event, res any, err error) { spurious++ })
				uv.UvtMust(t, err)
				uv.UvtMust(t, p.Start())
				successor = p
				close(swapped)
			}
		}
		zero, one := 0, 1
		uv.UvtMust(t, u.Call(func() {
			for i, fd := range []int{a[0], b[0]} {
				p, err := uv.NewPoll(u.Reactor, fd, uv.Readable, uv.PollOptions{CloseFD: true})
				uv.UvtMust(t, err)
				polls[i] = p
			}
			for i, other := range []*int{&one, &zero} {
				_, err := event.Subscribe(polls[i], onReady(other))
				uv.UvtMust(t, err)
				uv.UvtMust(t, polls[i].Start())
			}
		}))
		uv.UvtRecv(t, swapped, "the first poll's callback")
		// The pass that ran it is over once the loop runs this.
		n := -1
		uv.UvtMust(t, u.Call(func() { n = spurious }))
		if n != 0 {
			t.Errorf("the new poll over a reused descriptor was notified %d times, with nothing to read", n)
		}
		uv.UvtMust(t, u.Call(func() {
			for _, p := range append(polls[:], successor) {
				p.Close()
			}
		}))
		stop()
		uv.UvtShutdown(t, u, false)
	})
}
