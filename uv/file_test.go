package uv_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/uvevent/uvevent/event"
	uvcgo "github.com/uvevent/uvevent/internal/cgo"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// TestFileWriteRead writes a file through File's requests and reads it
// back, at offsets and sequentially, and checks it with package os, on
// each driver.
func TestFileWriteRead(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		ctx := context.Background()
		path := filepath.Join(t.TempDir(), "data")
		f, err := uv.OpenFile(ctx, u.Reactor, path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
		uv.UvtMust(t, err)
		data := bytes.Repeat([]byte("uvevent file "), 100_000) // 1.3 MB
		if n, err := f.Write(data); n != len(data) || err != nil {
			t.Fatalf("Write = %d, %v", n, err)
		}
		if n, err := f.WriteAt([]byte("HEAD"), 0); n != 4 || err != nil {
			t.Fatalf("WriteAt = %d, %v", n, err)
		}
		copy(data, "HEAD")
		got := make([]byte, len(data)+10)
		n, err := f.ReadAt(got, 0)
		if err != io.EOF || !bytes.Equal(got[:n], data) {
			t.Errorf("ReadAt = %d bytes, %v; want the %d written and io.EOF", n, err, len(data))
		}
		q, err := f.ReadAsync(4, 4)
		uv.UvtMust(t, err)
		out, err := event.Await(ctx, event.Any(), q)
		uv.UvtMust(t, err)
		if got, _ := out[0].Result.([]byte); string(got) != string(data[4:8]) {
			t.Errorf("ReadAsync(4, 4) = %q", out[0].Result)
		}
		if re := regexp.MustCompile(`^FS\(read .*data\)$`); !re.MatchString(q.Info()) {
			t.Errorf("Info = %q, want %s", q.Info(), re)
		}
		// At the end of the file: an empty read, then io.EOF for Read.
		q, err = f.ReadAsync(4, int64(len(data)))
		uv.UvtMust(t, err)
		out, err = event.Await(ctx, event.Any(), q)
		if got, ok := out[0].Result.([]byte); err != nil || !ok || len(got) != 0 {
			t.Errorf("ReadAsync at the end = %#v, %v; want an empty []byte", out[0].Result, err)
		}
		uv.UvtMust(t, f.Close())
		if err := f.Close(); !errors.Is(err, os.ErrClosed) {
			t.Errorf("second Close = %v, want os.ErrClosed", err)
		}
		if _, err := f.Read(make([]byte, 1)); !errors.Is(err, os.ErrClosed) {
			t.Errorf("Read after Close = %v", err)
		}
		onDisk, err := os.ReadFile(path)
		uv.UvtMust(t, err)
		if !bytes.Equal(onDisk, data) {
			t.Error("the file on disk differs from what was written")
		}
		// Sequential reads give the whole file; -1 reads and writes at the
		// descriptor's position.
		f, err = uv.OpenFile(ctx, u.Reactor, path, os.O_RDWR, 0)
		uv.UvtMust(t, err)
		all, err := io.ReadAll(f)
		if err != nil || !bytes.Equal(all, data) {
			t.Errorf("ReadAll = %d bytes, %v", len(all), err)
		}
		w, err := f.WriteAsync([]byte("TAIL"), -1)
		uv.UvtMust(t, err)
		if out, err := event.Await(ctx, event.Any(), w); err != nil || out[0].Result != 4 {
			t.Errorf("WriteAsync at the position = %v, %v; want 4", out[0].Result, err)
		}
		uv.UvtMust(t, f.Close())
		// Read reads at the descriptor's position, as read(2): after
		// ReadAll it is the end, where the write went.
		if onDisk, _ := os.ReadFile(path); string(onDisk) != string(data)+"TAIL" {
			t.Errorf("a write at the position after ReadAll left %q at the end, want TAIL", onDisk[max(len(onDisk)-4, 0):])
		}
		stop()
		uv.UvtShutdown(t, u, false)
	})
}

// errShape is what a test compares of a File's error: the call libuv (or
// the pure-Go driver in its name) made, the errno, and what it matches.
type errShape struct {
	PathOp        string // the *os.PathError's Op
	UvOp          string // the *uvcgo.Error's Op, for a failed system call
	Errno         syscall.Errno
	Closed        bool // matches os.ErrClosed
	ReactorClosed bool // matches reactor.ErrReactorClosed
}

func shapeOf(err error) errShape {
	var s errShape
	var pe *os.PathError
	if errors.As(err, &pe) {
		s.PathOp = pe.Op
	}
	var ue *uvcgo.Error
	if errors.As(err, &ue) {
		s.UvOp = ue.Op
	}
	errors.As(err, &s.Errno)
	s.Closed = errors.Is(err, os.ErrClosed)
	s.ReactorClosed = errors.Is(err, reactor.ErrReactorClosed)
	return s
}

// awaitErr returns the error a request completes with (or the one that
// refused it).
func awaitErr[T any](q *uv.FSRequest[T], err error) error {
	if err != nil {
		return err
	}
	out, err := event.Await(context.Background(), event.Any(), q)
	if err != nil {
		return err
	}
	return out[0].Err
}

// TestFileErrors gives File bad input on each driver and checks each
// error against the same table, so the drivers agree: clear errors, the
// reactor still serving afterwards, nothing left at Close.
func TestFileErrors(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		ctx := context.Background()
		dir := t.TempDir()
		path := filepath.Join(dir, "ro")
		uv.UvtMust(t, os.WriteFile(path, []byte("x"), 0o600))
		ro, err := uv.OpenFile(ctx, u.Reactor, path, os.O_RDONLY, 0)
		uv.UvtMust(t, err)
		defer ro.Close()
		closed, err := uv.OpenFile(ctx, u.Reactor, path, os.O_RDONLY, 0)
		uv.UvtMust(t, err)
		uv.UvtMust(t, closed.Close())
		d, err := uv.OpenFile(ctx, u.Reactor, dir, os.O_RDONLY, 0)
		uv.UvtMust(t, err)
		defer d.Close()
		one := []byte("y")
		cases := []struct {
			name string
			err  func() error
			want errShape
		}{
			{"open a missing file", func() error {
				_, err := uv.OpenFile(ctx, u.Reactor, filepath.Join(dir, "missing"), os.O_RDONLY, 0)
				return err
			}, errShape{PathOp: "open", UvOp: "uv_fs_open", Errno: syscall.ENOENT}},
			{"open a directory to write", func() error {
				_, err := uv.OpenFile(ctx, u.Reactor, dir, os.O_RDWR, 0)
				return err
			}, errShape{PathOp: "open", UvOp: "uv_fs_open", Errno: syscall.EISDIR}},
			{"write a read-only file", func() error { _, err := ro.Write(one); return err },
				errShape{PathOp: "write", UvOp: "uv_fs_write", Errno: syscall.EBADF}},
			{"read a directory", func() error { return awaitErr(d.ReadAsync(1, 0)) },
				errShape{PathOp: "read", UvOp: "uv_fs_read", Errno: syscall.EISDIR}},
			{"read a bad descriptor", func() error { return awaitErr(uv.UvtFSRead(u.Reactor, 1<<20)) },
				errShape{PathOp: "read", UvOp: "uv_fs_read", Errno: syscall.EBADF}},
			{"ReadAsync of 0 bytes", func() error { _, err := ro.ReadAsync(0, 0); return err },
				errShape{PathOp: "read", Errno: syscall.EINVAL}},
			{"ReadAsync at -2", func() error { _, err := ro.ReadAsync(1, -2); return err },
				errShape{PathOp: "read", Errno: syscall.EINVAL}},
			{"WriteAsync of nothing", func() error { _, err := ro.WriteAsync(nil, 0); return err },
				errShape{PathOp: "write", Errno: syscall.EINVAL}},
			{"WriteAsync at -5", func() error { _, err := ro.WriteAsync(one, -5); return err },
				errShape{PathOp: "write", Errno: syscall.EINVAL}},
			{"ReadAt at -1", func() error { _, err := ro.ReadAt(make([]byte, 1), -1); return err },
				errShape{PathOp: "read", Errno: syscall.EINVAL}},
			{"WriteAt at -1", func() error { _, err := ro.WriteAt(one, -1); return err },
				errShape{PathOp: "write", Errno: syscall.EINVAL}},
			{"ReadAsync of a closed file", func() error { _, err := closed.ReadAsync(1, 0); return err },
				errShape{PathOp: "read", Closed: true}},
			{"WriteAsync of a closed file", func() error { _, err := closed.WriteAsync(one, 0); return err },
				errShape{PathOp: "write", Closed: true}},
			{"ReadAt of a closed file", func() error { _, err := closed.ReadAt(make([]byte, 1), -1); return err },
				errShape{PathOp: "read", Closed: true}},
			{"Write to a closed file", func() error { _, err := closed.Write(one); return err },
				errShape{PathOp: "write", Closed: true}},
			{"Close a closed file", closed.Close, errShape{PathOp: "close", Closed: true}},
			{"open with no reactor", func() error {
				_, err := uv.OpenFile(ctx, nil, path, os.O_RDONLY, 0)
				return err
			}, errShape{PathOp: "open", Errno: syscall.EINVAL}},
		}
		for _, c := range cases {
			if diff := cmp.Diff(c.want, shapeOf(c.err())); diff != "" {
				t.Errorf("%s: error differs (-want +got):\n%s", c.name, diff)
			}
		}
		// The reactor still serves: the file reads.
		buf := make([]byte, 1)
		if n, err := ro.ReadAt(buf, 0); n != 1 || err != nil || buf[0] != 'x' {
			t.Errorf("ReadAt after the bad input = %d, %v, %q", n, err, buf)
		}
		uv.UvtMust(t, ro.Close())
		uv.UvtMust(t, d.Close())
		stop()
		uv.UvtShutdown(t, u, false)
	})
}

// TestFileAfterReactorClose: a File outlives its reactor only to be
// closed. Its requests are refused with ErrReactorClosed, and Close gives
// its descriptor back all the same.
func TestFileAfterReactorClose(t *testing.T) {
	eachDriverCounted(t, func(t *testing.T, u *uv.UvtReactor, _, fds int) {
		stop := uv.UvtServe(t, u)
		f, err := uv.OpenFile(context.Background(), u.Reactor, filepath.Join(t.TempDir(), "f"), os.O_RDWR|os.O_CREATE, 0o600)
		uv.UvtMust(t, err)
		stop()
		uv.UvtShutdown(t, u, false)
		want := errShape{PathOp: "write", ReactorClosed: true}
		if _, err := f.WriteAsync([]byte("late"), 0); !cmp.Equal(shapeOf(err), want) {
			t.Errorf("WriteAsync after the reactor's Close = %v, want ErrReactorClosed", err)
		}
		if err := f.Close(); !errors.Is(err, reactor.ErrReactorClosed) {
			t.Errorf("Close after the reactor's Close = %v, want ErrReactorClosed", err)
		}
		if got := uv.UvtOpenFDs(t); got > fds {
			t.Errorf("%d descriptors open after Close, want %d: the File's was not given back", got, fds)
		}
	})
}

// conformFS runs a file read request through the table on both
// drivers: a request runs from creation and completes by itself.
func conformFS(t *testing.T) conform.Kind {
	path := filepath.Join(t.TempDir(), "f")
	uv.UvtMust(t, os.WriteFile(path, []byte("conformance"), 0o600))
	return conform.Kind{
		Name:    "fs",
		OneShot: true,
		NoStart: true,
		New: func(r *reactor.Reactor) (event.Event, error) {
			f, err := os.Open(path)
			if err != nil {
				return nil, err
			}
			t.Cleanup(func() { f.Close() })
			return uv.UvtFSRead(r, f.Fd())
		},
		Info: regexp.MustCompile(`^FS\(read \S+\)$`),
	}
}

// A file request counts as "fs" in Stats().Handles while in flight, on both
// drivers alike, and not once it has completed.
func TestFSRequestCounted(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		f, err := uv.OpenFile(context.Background(), u.Reactor, filepath.Join(t.TempDir(), "x"), os.O_CREATE|os.O_RDWR, 0o600)
		uv.UvtMust(t, err)
		var q *uv.FSRequest[int]
		var inFlight map[string]int
		uv.UvtMust(t, u.Call(func() {
			// Submitted on the loop: it cannot complete before a later turn.
			q, err = f.WriteAsync([]byte("x"), 0)
			inFlight = u.Stats().Handles
		}))
		uv.UvtMust(t, err)
		if diff := cmp.Diff(map[string]int{"fs": 1}, inFlight); diff != "" {
			t.Errorf("a file request in flight (-want +got):\n%s", diff)
		}
		if _, err := event.Await(waitCtx(t), event.Any(), q); err != nil {
			t.Fatal(err)
		}
		if n := u.Stats().Handles["fs"]; n != 0 {
			t.Errorf("a completed file request still counts: fs=%d", n)
		}
		uv.UvtMust(t, f.Close())
		stop()
		uv.UvtShutdown(t, u, false)
	})
}
