//go:build cgo

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

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// TestFileWriteRead writes a file through libuv's requests and reads it
// back, at offsets and sequentially, and checks it with package os.
func TestFileWriteRead(t *testing.T) {
	u := uv.UvtNewReactor(t)
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
	// Sequential reads give the whole file.
	f, err = uv.OpenFile(ctx, u.Reactor, path, os.O_RDONLY, 0)
	uv.UvtMust(t, err)
	all, err := io.ReadAll(f)
	if err != nil || !bytes.Equal(all, data) {
		t.Errorf("ReadAll = %d bytes, %v", len(all), err)
	}
	uv.UvtMust(t, f.Close())
	stop()
	uv.UvtShutdown(t, u, false)
}

func TestFileErrors(t *testing.T) {
	u := uv.UvtNewReactor(t)
	stop := uv.UvtServe(t, u)
	ctx := context.Background()
	_, err := uv.OpenFile(ctx, u.Reactor, filepath.Join(t.TempDir(), "missing"), os.O_RDONLY, 0)
	var pe *os.PathError
	if !errors.Is(err, os.ErrNotExist) || !errors.Is(err, syscall.ENOENT) || !errors.As(err, &pe) {
		t.Errorf("OpenFile of a missing file = %v, want an *os.PathError matching os.ErrNotExist", err)
	}
	path := filepath.Join(t.TempDir(), "ro")
	os.WriteFile(path, []byte("x"), 0o600)
	f, err := uv.OpenFile(ctx, u.Reactor, path, os.O_RDONLY, 0)
	uv.UvtMust(t, err)
	if _, err := f.Write([]byte("y")); !errors.Is(err, syscall.EBADF) {
		t.Errorf("Write to a read-only file = %v, want EBADF", err)
	}
	if _, err := f.ReadAsync(0, 0); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("ReadAsync(0) = %v, want EINVAL", err)
	}
	uv.UvtMust(t, f.Close())
	stop()
	uv.UvtShutdown(t, u, false)
}

// TestConformFS runs a file read request through the table: a request
// runs from creation and completes by itself.
func TestConformFS(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	uv.UvtMust(t, os.WriteFile(path, []byte("conformance"), 0o600))
	conform.Run(t, conform.Kind{
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
	})
}
