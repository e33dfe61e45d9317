package uv_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/uv"
)

// TestDialFailureClosesIO: a Dial that fails (a refused port, a
// socket path that does not exist, a path that is no socket) returns only
// the error, so nobody can close the IO it had begun: it must close
// itself, not hold its handle and descriptor until the collector runs.
func TestDialFailureClosesIO(t *testing.T) {
	defer debugGC(-1)()
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		ln, err := uv.Listen(u.Reactor, "tcp4", "127.0.0.1:0")
		uv.UvtMust(t, err)
		closedPort := ln.Addr().String()
		uv.UvtMust(t, ln.Close())
		dir := t.TempDir()
		notSocket := filepath.Join(dir, "file")
		uv.UvtMust(t, os.WriteFile(notSocket, nil, 0o600))
		uv.UvtWaitFor(t, "the listener's handle to go", func() bool { return handlesLeft(u) == 0 })
		fds := uv.UvtOpenFDs(t)
		for _, tc := range []struct {
			network, addr string
			want          error
		}{
			{"tcp4", closedPort, syscall.ECONNREFUSED},
			{"unix", filepath.Join(dir, "nobody"), syscall.ENOENT},
			{"unix", notSocket, syscall.ECONNREFUSED},
		} {
			_, err := uv.Dial(context.Background(), u.Reactor, tc.network, tc.addr)
			if !errors.Is(err, tc.want) {
				t.Errorf("Dial(%s, %s) = %v, want %v", tc.network, tc.addr, err, tc.want)
			}
			// Closed by now, or (libuv) on the next turn; the collector,
			// kept from running, closes nothing meanwhile.
			uv.UvtWaitFor(t, "the failed dial's IO to close", func() bool { return u.Stats().Handles["io"] == 0 })
		}
		// An async dial's future tells the same, with the IO closed.
		f, err := uv.DialAsync(u.Reactor, "tcp4", closedPort)
		uv.UvtMust(t, err)
		if _, err := event.AwaitValue[*uv.IO](context.Background(), f); !errors.Is(err, syscall.ECONNREFUSED) {
			t.Errorf("DialAsync to a closed port: %v, want ECONNREFUSED", err)
		}
		// C handles close on the next turn of libuv: wait for it.
		uv.UvtWaitFor(t, "the failed dials' handles to go", func() bool { return handlesLeft(u) == 0 })
		if got := uv.UvtOpenFDs(t); got > fds {
			t.Errorf("%d descriptors open after the failed dials, want at most %d", got, fds)
		}
		stop()
		uv.UvtShutdown(t, u, false)
	})
}

// TestDialAbandoned: a Dial whose context ends while the connect
// is in flight returns the context's error; the connect goes on and, when
// it completes, its IO is closed: the server reads the end of the stream,
// and no handle is left. The connect is held in flight by a listener
// whose queue is full (the kernel drops the SYN until the queue has room,
// and the client sends it again a second later).
func TestDialAbandoned(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		addr, lfd, first := heldConnect(t)
		// The context ends once the connect is in flight (its IO counted):
		// a context ended before the call starts no connect at all.
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			for u.Stats().Handles["io"] == 0 {
				runtime.Gosched()
			}
			cancel()
		}()
		if _, err := uv.Dial(ctx, u.Reactor, "tcp4", addr); !errors.Is(err, context.Canceled) {
			t.Fatalf("Dial with its connect held in flight and a cancelled context = %v, want context.Canceled", err)
		}
		// Make room: the abandoned connect completes, and is closed.
		tv := unix.Timeval{Sec: int64(uv.UvtSafety.Seconds())}
		uv.UvtMust(t, unix.SetsockoptTimeval(lfd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv))
		for range 2 {
			fd, err := rawAccept(lfd)
			uv.UvtMust(t, err)
			defer unix.Close(fd)
			uv.UvtMust(t, unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv))
			local, err := unix.Getpeername(fd)
			uv.UvtMust(t, err)
			if local.(*unix.SockaddrInet4).Port == first.LocalAddr().(*net.TCPAddr).Port {
				continue // the connection that filled the queue
			}
			if n, err := rawRead(fd, make([]byte, 1)); n != 0 || err != nil {
				t.Errorf("server read from the abandoned connection = %d, %v; want its end", n, err)
			}
		}
		uv.UvtWaitFor(t, "the abandoned connection's handle to go", func() bool { return handlesLeft(u) == 0 })
		stop()
		uv.UvtShutdown(t, u, false)
	})
}

// TestDialFutureClosed: a DialAsync whose future is closed before
// the connect completes has nobody to give its IO to: the IO closes when
// the connect completes (the server reads the end of the stream) rather
// than wait for the collector, here kept from running.
func TestDialFutureClosed(t *testing.T) {
	defer debugGC(-1)()
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		uv.UvtMust(t, v.u.Call(func() {
			f, err := uv.DialAsync(v.u.Reactor, "tcp4", v.ln.Addr().String())
			uv.UvtMust(t, err)
			uv.UvtMust(t, f.Close()) // before any turn: the connect is in flight
		}))
		s, err := v.ln.AcceptIO(context.Background())
		uv.UvtMust(t, err)
		read := func() error {
			n, err := s.Read(make([]byte, 1))
			if n != 0 {
				return fmt.Errorf("read %d bytes", n)
			}
			return err
		}
		if err := within(t, "the server's read", read); !errors.Is(err, io.EOF) {
			t.Errorf("server read from the abandoned connection: %v, want io.EOF", err)
		}
		v.finish(t, s)
	})
}

// TestDialUnixQueueFull: a Unix socket's listen queue full (the
// listener stopped, its backlog taken), a Dial is refused at once with
// EAGAIN on both drivers (libuv's uv_pipe_connect, like connect(2), does
// not wait), and its IO is closed.
func TestDialUnixQueueFull(t *testing.T) {
	defer debugGC(-1)()
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		path := filepath.Join(t.TempDir(), "sock")
		ln, err := uv.ListenConfig{Backlog: 1}.Listen(u.Reactor, "unix", path)
		uv.UvtMust(t, err)
		var held []*uv.IO
		for {
			c, err := uv.Dial(context.Background(), u.Reactor, "unix", path)
			if err != nil {
				if !errors.Is(err, syscall.EAGAIN) {
					t.Errorf("Dial to a full queue = %v, want EAGAIN", err)
				}
				break
			}
			held = append(held, c)
			if len(held) > 16 {
				t.Fatal("16 connections queued with a backlog of 1")
			}
		}
		uv.UvtWaitFor(t, "the refused dial's IO to close", func() bool { return u.Stats().Handles["io"] == len(held) })
		for _, c := range held {
			uv.UvtMust(t, c.Close())
		}
		uv.UvtMust(t, ln.Close())
		stop()
		uv.UvtShutdown(t, u, false)
	})
}
