package uv_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// TestUnixNamesRefused: a Unix socket name that the system would take as
// another (cut at a NUL byte, or cut to fit sun_path) is refused with
// EINVAL by Listen and Dial, and nothing is made under the cut name; a
// listen in a missing directory is ENOENT; on both drivers.
func TestUnixNamesRefused(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		u := uv.UvtNewReactorOn(t, d)
		stop := uv.UvtServe(t, u)
		defer stop()
		dir := t.TempDir()
		long := filepath.Join(dir, strings.Repeat("s", 108-len(dir))) // 109 bytes
		for _, name := range []string{filepath.Join(dir, "a\x00b"), long} {
			if ln, err := uv.Listen(u.Reactor, "unix", name); !errors.Is(err, syscall.EINVAL) {
				t.Errorf("Listen(unix, %q) = %v, want EINVAL", name, err)
				if ln != nil {
					ln.Close()
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
			if c, err := uv.Dial(ctx, u.Reactor, "unix", name); !errors.Is(err, syscall.EINVAL) {
				t.Errorf("Dial(unix, %q) = %v, want EINVAL", name, err)
				if c != nil {
					c.Close()
				}
			}
			cancel()
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 0 {
			t.Errorf("refused names left %d files in the directory (%s...)", len(ents), ents[0].Name())
		}
		if ln, err := uv.Listen(u.Reactor, "unix", filepath.Join(dir, "missing", "s")); !errors.Is(err, syscall.ENOENT) {
			t.Errorf("Listen in a missing directory = %v, want ENOENT", err)
			if ln != nil {
				ln.Close()
			}
		}
	})
}

// TestOpenFileNULRefused: a name with a NUL byte is refused with EINVAL,
// as package os does, and the name cut at the NUL is not opened nor made.
func TestOpenFileNULRefused(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		u := uv.UvtNewReactorOn(t, d)
		stop := uv.UvtServe(t, u)
		defer stop()
		dir := t.TempDir()
		ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
		defer cancel()
		f, err := uv.OpenFile(ctx, u.Reactor, filepath.Join(dir, "secret\x00.pub"), os.O_CREATE|os.O_RDWR, 0o600)
		if !errors.Is(err, syscall.EINVAL) {
			t.Errorf("OpenFile with a NUL byte = %v, want EINVAL", err)
		}
		if f != nil {
			f.Close()
		}
		if _, err := os.Stat(filepath.Join(dir, "secret")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the name cut at the NUL was made (%v)", err)
		}
	})
}

// TestDialEndedContext: Dial with a context that has ended connects
// nothing and returns the context's error.
func TestDialEndedContext(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		c, err := uv.Dial(ctx, v.u.Reactor, "tcp4", v.ln.Addr().String())
		if !errors.Is(err, context.Canceled) || c != nil {
			t.Errorf("Dial with a cancelled context = %v, %v; want nil, context.Canceled", c, err)
		}
		if c != nil {
			c.Close()
		}
		v.finish(t)
	})
}

// TestOpenPipeUnwatchable: a descriptor epoll cannot watch (a regular
// file, /dev/null, a directory) is refused by OpenPipe with EPERM on both
// drivers (libuv would abort at the first read), and stays the caller's.
func TestOpenPipeUnwatchable(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		u := uv.UvtNewReactorOn(t, d)
		stop := uv.UvtServe(t, u)
		defer stop()
		dir := t.TempDir()
		file := filepath.Join(dir, "f")
		uv.UvtMust(t, os.WriteFile(file, []byte("x"), 0o600))
		for _, name := range []string{file, os.DevNull, dir} {
			fd, err := syscall.Open(name, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
			uv.UvtMust(t, err)
			c, err := uv.OpenPipe(u.Reactor, fd)
			if !errors.Is(err, syscall.EPERM) {
				t.Errorf("OpenPipe(%s) = %v, want EPERM", name, err)
			}
			if c != nil {
				buf := make([]byte, 1)
				c.SetReadDeadline(deadlineSoon())
				c.Read(buf)
				c.Close()
				continue
			}
			if err := syscall.Close(fd); err != nil {
				t.Errorf("the refused descriptor of %s is not the caller's any more: %v", name, err)
			}
		}
	})
}
