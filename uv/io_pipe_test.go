package uv_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"

	"github.com/uvevent/uvevent/uv"
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
