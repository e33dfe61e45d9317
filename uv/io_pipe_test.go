package uv_test

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"

	"github.com/uvevent/uvevent/eventkind"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
	"golang.org/x/sys/unix"
)

// TestPipePair: what one end of a socket pair writes, the other reads, both
// ways, and the end of one is the other's io.EOF.
func TestPipePair(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		a, b, err := uv.Pipe(u.Reactor)
		uv.UvtMust(t, err)
		for _, dir := range []struct {
			from, to *uv.IO
			msg      string
		}{{a, b, "a to b"}, {b, a, "b to a"}} {
			if _, err := dir.from.Write([]byte(dir.msg)); err != nil {
				t.Fatal(err)
			}
			got := make([]byte, len(dir.msg))
			if _, err := io.ReadFull(dir.to, got); err != nil || string(got) != dir.msg {
				t.Errorf("read %q, %v; want %q", got, err, dir.msg)
			}
		}
		if re := regexp.MustCompile(`^IO\(unix \S*->\S*, in=\d+, out=\d+\)$`); !re.MatchString(a.Info()) {
			t.Errorf("Info = %q, want %s", a.Info(), re)
		}
		uv.UvtMust(t, a.Close())
		if n, err := b.Read(make([]byte, 1)); n != 0 || err != io.EOF {
			t.Errorf("Read after the other end closed = %d, %v; want io.EOF", n, err)
		}
		uv.UvtMust(t, b.Close())
		stop()
		uv.UvtShutdown(t, u, false)
	})
}

// TestUnixListener listens on a socket path, dials it and echoes; Close
// removes the socket file.
func TestUnixListener(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		path := filepath.Join(t.TempDir(), "echo.sock")
		ln, err := uv.Listen(u.Reactor, "unix", path)
		uv.UvtMust(t, err)
		if ln.Addr().String() != path || ln.Addr().Network() != "unix" {
			t.Errorf("Addr = %s %s, want unix %s", ln.Addr().Network(), ln.Addr(), path)
		}
		if _, err := uv.Listen(u.Reactor, "unix", path); !errors.Is(err, syscall.EADDRINUSE) {
			t.Errorf("second Listen on %s = %v, want EADDRINUSE", path, err)
		}
		if _, err := (uv.ListenConfig{ReusePort: true}).Listen(u.Reactor, "unix", path+"2"); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("ReusePort over unix = %v, want EINVAL", err)
		}
		go func() {
			s, err := ln.AcceptIO(context.Background())
			if err != nil {
				t.Errorf("AcceptIO: %v", err)
				return
			}
			io.Copy(s, s)
			s.Close()
		}()
		c, err := uv.Dial(context.Background(), u.Reactor, "unix", path)
		uv.UvtMust(t, err)
		if got := c.RemoteAddr().String(); got != path {
			t.Errorf("RemoteAddr = %q, want %q", got, path)
		}
		c.Write([]byte("over a unix socket"))
		c.CloseWrite()
		if got, err := io.ReadAll(c); err != nil || string(got) != "over a unix socket" {
			t.Errorf("echo = %q, %v", got, err)
		}
		c.Close()
		uv.UvtMust(t, ln.Close())
		if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("socket file after Close: %v, want it gone", err)
		}
		if _, err := uv.Dial(context.Background(), u.Reactor, "unix", path); !errors.Is(err, syscall.ENOENT) {
			t.Errorf("Dial to a removed socket = %v, want ENOENT", err)
		}
		if _, err := uv.Listen(u.Reactor, "unix", ""); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("Listen on an empty path = %v, want EINVAL", err)
		}
		stop()
		uv.UvtShutdown(t, u, false)
	})
}

func TestOpenPipeBadFD(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		if _, err := uv.OpenPipe(u.Reactor, 1<<20); err == nil {
			t.Error("OpenPipe on a descriptor that is not open succeeded")
		}
		uv.UvtShutdown(t, u, false)
	})
}

// An unnamed Unix socket (either end of Pipe, the dialling end of a
// connection) has the empty name on both drivers, in its addresses and its
// Info, as libuv's uv_pipe_getsockname gives it.
func TestUnixUnnamedAddress(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		a, b, err := uv.Pipe(u.Reactor)
		uv.UvtMust(t, err)
		path := filepath.Join(t.TempDir(), "s.sock")
		ln, err := uv.Listen(u.Reactor, "unix", path)
		uv.UvtMust(t, err)
		accepted := make(chan *uv.IO, 1)
		go func() {
			s, err := ln.AcceptIO(context.Background())
			if err != nil {
				t.Errorf("AcceptIO: %v", err)
			}
			accepted <- s
		}()
		c, err := uv.Dial(context.Background(), u.Reactor, "unix", path)
		uv.UvtMust(t, err)
		s := uv.UvtRecv(t, accepted, "the accepted connection")
		if s == nil {
			t.FailNow()
		}
		for _, x := range []struct {
			name          string
			c             *uv.IO
			local, remote string
		}{{"pipe", a, "", ""}, {"dialled", c, "", path}, {"accepted", s, path, ""}} {
			if got := x.c.LocalAddr().String(); got != x.local {
				t.Errorf("%s: LocalAddr = %q, want %q", x.name, got, x.local)
			}
			if got := x.c.RemoteAddr().String(); got != x.remote {
				t.Errorf("%s: RemoteAddr = %q, want %q", x.name, got, x.remote)
			}
			if want := "IO(unix " + x.local + "->" + x.remote + ", in=0, out=0)"; x.c.Info() != want {
				t.Errorf("%s: Info = %q, want %q", x.name, x.c.Info(), want)
			}
		}
		for _, x := range []*uv.IO{a, b, c, s} {
			uv.UvtMust(t, x.Close())
		}
		uv.UvtMust(t, ln.Close())
		stop()
		uv.UvtShutdown(t, u, false)
	})
}

// TestPipeDirections: OpenPipe on the ends of a pipe(2). As libuv's
// uv_pipe_open does, the read end refuses writes (EPIPE) and CloseWrite
// (ENOTCONN), the write end refuses reads (ENOTCONN), at once: nothing
// waits for readiness that cannot come. The bytes still flow the one way.
func TestPipeDirections(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		var p [2]int
		uv.UvtMust(t, uv.UvtPipe2(p[:], unix.O_CLOEXEC))
		r, err := uv.OpenPipe(u.Reactor, p[0])
		uv.UvtMust(t, err)
		w, err := uv.OpenPipe(u.Reactor, p[1])
		uv.UvtMust(t, err)
		if _, err := r.Write([]byte("x")); !errors.Is(err, syscall.EPIPE) {
			t.Errorf("Write on the read end = %v, want EPIPE", err)
		}
		if err := within(t, "CloseWrite on the read end", r.CloseWrite); !errors.Is(err, syscall.ENOTCONN) {
			t.Errorf("CloseWrite on the read end = %v, want ENOTCONN", err)
		}
		read := func() error { _, err := w.Read(make([]byte, 1)); return err }
		if err := within(t, "Read on the write end", read); !errors.Is(err, syscall.ENOTCONN) {
			t.Errorf("Read on the write end = %v, want ENOTCONN", err)
		}
		if _, err := w.Write([]byte("pipe")); err != nil {
			t.Fatalf("Write on the write end: %v", err)
		}
		b := make([]byte, 4)
		if n, err := r.Read(b); err != nil || string(b[:n]) != "pipe" {
			t.Errorf("Read on the read end = %q, %v; want \"pipe\"", b[:n], err)
		}
		uv.UvtMust(t, w.Close())
		if _, err := r.Read(b); err == nil {
			t.Errorf("Read after the write end closed succeeded, want io.EOF")
		}
		uv.UvtMust(t, r.Close())
		stop()
		uv.UvtShutdown(t, u, false)
	})
}

// within runs call on a goroutine of its own and returns its error; a call
// still waiting at the safety deadline fails the test instead of hanging it.
func within(t *testing.T, what string, call func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- call() }()
	return uv.UvtRecv(t, done, what)
}

// TestPipeCloseWriteTwice: the writing side shuts down once: a second
// CloseWrite is refused with ENOTCONN (libuv's uv_shutdown), and a write
// after it fails with EPIPE, on both drivers; reading goes on.
func TestPipeCloseWriteTwice(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		c, s := v.pair(t)
		uv.UvtMust(t, c.CloseWrite())
		if err := c.CloseWrite(); !errors.Is(err, syscall.ENOTCONN) {
			t.Errorf("second CloseWrite = %v, want ENOTCONN", err)
		}
		if _, err := c.Write([]byte("x")); !errors.Is(err, syscall.EPIPE) {
			t.Errorf("Write after CloseWrite = %v, want EPIPE", err)
		}
		// On the loop, CloseWrite does not wait; the second is refused all
		// the same, and so is a Send.
		var second, send error
		uv.UvtMust(t, v.u.Call(func() {
			uv.UvtMust(t, s.CloseWrite())
			second = s.CloseWrite()
			send = s.Send([]byte("x"))
		}))
		if !errors.Is(second, syscall.ENOTCONN) || !errors.Is(send, syscall.EPIPE) {
			t.Errorf("on the loop: second CloseWrite = %v, Send = %v; want ENOTCONN, EPIPE", second, send)
		}
		for _, x := range []*uv.IO{c, s} {
			if n, err := x.Read(make([]byte, 1)); n != 0 || err == nil {
				t.Errorf("Read after both sides shut = %d, %v; want io.EOF", n, err)
			}
		}
		v.finish(t, c, s)
	})
}

// TestOpenPipeRefused: OpenPipe refuses what it cannot watch, and
// leaves the descriptor to its caller: a bad descriptor (EBADF), a
// regular file (epoll refuses it: EPERM), on the pure-Go driver the same
// descriptor twice (EEXIST). The reactor goes on and nothing is left.
func TestOpenPipeRefused(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		if _, err := uv.OpenPipe(u.Reactor, 1<<20); !errors.Is(err, syscall.EBADF) {
			t.Errorf("OpenPipe(bad descriptor) = %v, want EBADF", err)
		}
		f, err := os.CreateTemp(t.TempDir(), "regular")
		uv.UvtMust(t, err)
		defer f.Close()
		if u.Driver() == reactor.DriverGo { // libuv takes a file, and fails its reads
			if _, err := uv.OpenPipe(u.Reactor, int(f.Fd())); !errors.Is(err, syscall.EPERM) {
				t.Errorf("OpenPipe(regular file) = %v, want EPERM", err)
			}
			a, b, err := uv.Pipe(u.Reactor)
			uv.UvtMust(t, err)
			if _, err := uv.OpenPipe(u.Reactor, int(f.Fd())); !errors.Is(err, syscall.EPERM) {
				t.Errorf("OpenPipe(regular file) with a poller = %v, want EPERM", err)
			}
			var fd int
			sp, err := uv.UvtSocketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
			uv.UvtMust(t, err)
			fd = sp[0]
			x, err := uv.OpenPipe(u.Reactor, fd)
			uv.UvtMust(t, err)
			if _, err := uv.OpenPipe(u.Reactor, fd); !errors.Is(err, syscall.EEXIST) {
				t.Errorf("OpenPipe of a descriptor an IO has = %v, want EEXIST", err)
			}
			// The first IO still works.
			if _, err := unix.Write(sp[1], []byte("y")); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
			defer cancel()
			fut, err := x.ReadAsync(1)
			uv.UvtMust(t, err)
			if got, err := fut.Await(ctx); err != nil || string(got) != "y" {
				t.Errorf("read on the first IO = %v, %v", got, err)
			}
			for _, c := range []*uv.IO{a, b, x} {
				uv.UvtMust(t, c.Close())
			}
			unix.Close(sp[1])
		}
		if _, err := f.Stat(); err != nil {
			t.Errorf("the refused file's descriptor was closed: %v", err)
		}
		stop()
		uv.UvtShutdown(t, u, false)
	})
}

// TestPipeAddresses: the ends of a socket pair have no name: their
// addresses are empty Unix addresses on both drivers (not "@", an abstract
// name nobody bound).
func TestPipeAddresses(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		a, b, err := uv.Pipe(u.Reactor)
		uv.UvtMust(t, err)
		for _, x := range []*uv.IO{a, b} {
			for what, addr := range map[string]net.Addr{"local": x.LocalAddr(), "remote": x.RemoteAddr()} {
				if ua, ok := addr.(*net.UnixAddr); !ok || ua.Name != "" || ua.Net != "unix" {
					t.Errorf("%s address of a socket pair's end = %#v, want an empty *net.UnixAddr", what, addr)
				}
			}
		}
		uv.UvtMust(t, a.Close())
		uv.UvtMust(t, b.Close())
		stop()
		uv.UvtShutdown(t, u, false)
	})
}

// TestPipeStartWriteEnd: Start on a pipe's write end fails with
// ENOTCONN (reading it cannot start) and leaves the IO stopped, on both
// drivers.
func TestPipeStartWriteEnd(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		var p [2]int
		uv.UvtMust(t, uv.UvtPipe2(p[:], unix.O_CLOEXEC))
		defer unix.Close(p[0])
		w, err := uv.OpenPipe(u.Reactor, p[1])
		uv.UvtMust(t, err)
		cs := uv.UvtSubscribe(t, w, u.Owner().Owned)
		if err := w.Start(); !errors.Is(err, syscall.ENOTCONN) {
			t.Errorf("Start on a pipe's write end = %v, want ENOTCONN", err)
		}
		if n := eventkind.LoopRefs(w); n != 0 {
			t.Errorf("the IO whose Start failed has %d loop references, want 0", n)
		}
		uv.UvtMust(t, w.Close())
		if n := len(cs.Calls()); n != 1 {
			t.Errorf("%d notifications, want only the close's: %v", n, cs.Calls())
		}
		stop()
		uv.UvtShutdown(t, u, false)
	})
}
