package uv_test

import (
	"context"
	"errors"
	"net"
	"syscall"
	"testing"

	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// TestBadInputRefusedWithEINVAL: what no program can mean is refused at
// once with an error matching syscall.EINVAL, naming the call: a signal Go
// cannot deliver to a program (the synchronous faults SIGSEGV, SIGBUS,
// SIGFPE and SIGILL, which the Go runtime turns into panics, and SIGKILL
// and SIGSTOP, which no process can catch), and a task pool larger than
// libuv's own limit of 1,024 threads.
func TestBadInputRefusedWithEINVAL(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		u := uv.UvtNewReactorOn(t, d)
		for _, sig := range []syscall.Signal{syscall.SIGSEGV, syscall.SIGBUS, syscall.SIGFPE, syscall.SIGILL, syscall.SIGKILL, syscall.SIGSTOP} {
			if _, err := uv.NewSignal(u.Reactor, syscall.SIGINT, sig); !errors.Is(err, syscall.EINVAL) {
				t.Errorf("NewSignal(SIGINT, %v) = %v, want EINVAL", sig, err)
			}
		}
		for _, n := range []int{1025, 1 << 40} {
			if _, err := uv.NewTaskPool(n); !errors.Is(err, syscall.EINVAL) {
				t.Errorf("NewTaskPool(%d) = %v, want EINVAL", n, err)
			}
		}
		if p, err := uv.NewTaskPool(1024); err != nil || p == nil {
			t.Errorf("NewTaskPool(1024) = %v, %v; want a pool", p, err)
		}
		uv.UvtShutdown(t, u, false)
	})
}

// TestListenNegativeBacklog: a negative Backlog asks for the system's
// maximum, as listen(2) takes it (the kernel bounds it by somaxconn): the
// listener listens and accepts, on both drivers.
func TestListenNegativeBacklog(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		ln, err := uv.ListenConfig{Backlog: -1}.Listen(u.Reactor, "tcp4", "127.0.0.1:0")
		uv.UvtMust(t, err)
		c, err := net.Dial("tcp4", ln.Addr().String())
		uv.UvtMust(t, err)
		ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
		defer cancel()
		s, err := ln.AcceptIO(ctx)
		uv.UvtMust(t, err)
		uv.UvtMust(t, s.Close())
		uv.UvtMust(t, c.Close())
		uv.UvtMust(t, ln.Close())
		stop()
		uv.UvtShutdown(t, u, false)
	})
}
