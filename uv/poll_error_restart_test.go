package uv_test

import (
	"errors"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/uv"
)

// The tests of this file start a poll again from the callback that hears
// its error. Polling stops with an error, and libuv's uv__poll_io stops
// the handle before it calls the callback, so a uv_poll_start there polls
// again. So must a Start here, on both drivers, of the poll or of a
// proxy: it returns nil, and it must not be undone once the callbacks
// have run.

// refusedUDP returns a UDP socket connected to a loopback port nobody
// listens on, with the refusal pending (SO_ERROR): epoll reports an error
// on it until the error is taken.
func refusedUDP(t *testing.T) int {
	t.Helper()
	probe, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	uv.UvtMust(t, err)
	uv.UvtMust(t, unix.Bind(probe, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}))
	sa, err := unix.Getsockname(probe)
	uv.UvtMust(t, err)
	unix.Close(probe) // the port is free now: nothing listens there
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	uv.UvtMust(t, err)
	uv.UvtMust(t, unix.Connect(fd, sa))
	_, err = unix.Write(fd, []byte("x"))
	uv.UvtMust(t, err)
	// The ICMP refusal comes on its own: wait for it (the bound is only a
	// safety net).
	p := []unix.PollFd{{Fd: int32(fd)}}
	if n, err := unix.Poll(p, 10_000); err != nil || n != 1 || p[0].Revents&unix.POLLERR == 0 {
		t.Fatalf("no refusal pending on the UDP socket: poll = %d, %v, revents %#x", n, err, p[0].Revents)
	}
	return fd
}

// takeError takes a socket's pending error: epoll reports no error on it
// any more.
func takeError(t *testing.T, fd int) {
	if _, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ERROR); err != nil {
		t.Error(err)
	}
}

// TestPollStartedAgainByErrorCallback: the poll's callback takes the
// socket's error and starts the poll again when it hears it; the poll is
// then started and polls for Writable.
func TestPollStartedAgainByErrorCallback(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		fd := refusedUDP(t)
		p, err := uv.NewPoll(u.Reactor, fd, uv.Writable, uv.PollOptions{CloseFD: true})
		uv.UvtMust(t, err)
		calls := 0 // loop-owned
		var startErr error
		event.Subscribe(p, func(_ event.Event, res any, err error) {
			if errors.Is(err, event.ErrClosed) {
				return
			}
			calls++
			if calls == 1 {
				takeError(t, fd)
				startErr = p.Start()
			}
		})
		uv.UvtMust(t, u.Call(func() { uv.UvtMust(t, p.Start()) }))
		uv.UvtWaitFor(t, "the first error", func() bool {
			n := 0
			u.Call(func() { n = calls })
			return n > 0
		})
		var state event.State
		uv.UvtMust(t, u.Call(func() { state = event.StateOf(p) }))
		if startErr != nil || state != event.Active {
			t.Errorf("after a Start from the error callback (err %v), the poll is %v, want active", startErr, state)
		}
		if m := uv.UvtPolling(p); m != uv.Writable {
			t.Errorf("after a Start from the error callback, the poll polls for %v, want %v", m, uv.Writable)
		}
		uv.UvtMust(t, u.Call(func() { p.Close() }))
		stop()
		uv.UvtShutdown(t, u, false)
	})
}

// TestPollProxyStartedAgainByErrorCallback: as above with two proxies:
// both hear the error, and the one whose callback starts it again is
// started and polled for; the other stays stopped.
func TestPollProxyStartedAgainByErrorCallback(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		fd := refusedUDP(t)
		p, err := uv.NewPoll(u.Reactor, fd, uv.Writable, uv.PollOptions{CloseFD: true})
		uv.UvtMust(t, err)
		var xs [2]*uv.PollProxy
		var heard [2]int // loop-owned
		var startErr error
		uv.UvtMust(t, u.Call(func() {
			for i := range xs {
				xs[i], err = uv.NewPollProxy(p, uv.Writable)
				uv.UvtMust(t, err)
				event.Subscribe(xs[i], func(_ event.Event, res any, err error) {
					if errors.Is(err, event.ErrClosed) {
						return
					}
					heard[i]++
					if i == 0 && heard[i] == 1 {
						takeError(t, fd)
						startErr = xs[i].Start()
					}
				})
				uv.UvtMust(t, xs[i].Start())
			}
		}))
		uv.UvtWaitFor(t, "the error", func() bool {
			n := 0
			u.Call(func() { n = heard[1] })
			return n > 0
		})
		var states [2]event.State
		uv.UvtMust(t, u.Call(func() {
			for i, x := range xs {
				states[i] = event.StateOf(x)
			}
		}))
		if startErr != nil || states[0] != event.Active {
			t.Errorf("after a Start from its error callback (err %v), the proxy is %v, want active", startErr, states[0])
		}
		if states[1] == event.Active {
			t.Errorf("the proxy not started again is %v, want stopped", states[1])
		}
		if m := uv.UvtPolling(p); m != uv.Writable {
			t.Errorf("with a proxy started again, the poll polls for %v, want %v", m, uv.Writable)
		}
		uv.UvtMust(t, u.Call(func() { p.Close() }))
		stop()
		uv.UvtShutdown(t, u, false)
	})
}
