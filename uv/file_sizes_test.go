package uv_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// deadlineSoon is a deadline that ends a test's stray wait.
func deadlineSoon() time.Time { return time.Now().Add(100 * time.Millisecond) }

// TestFileHugeRead: a read request for far more than the file holds (4 GiB
// and more, 1 TiB) completes with the file's bytes: no 32-bit truncation
// (libuv's buffer length), no allocation of the size asked for (which ended
// the process on the pure-Go driver).
func TestFileHugeRead(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		u := uv.UvtNewReactorOn(t, d)
		stop := uv.UvtServe(t, u)
		defer stop()
		name := filepath.Join(t.TempDir(), "f")
		want := []byte("hello world")
		uv.UvtMust(t, os.WriteFile(name, want, 0o600))
		ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
		defer cancel()
		f, err := uv.OpenFile(ctx, u.Reactor, name, os.O_RDONLY, 0)
		uv.UvtMust(t, err)
		defer f.Close()
		for _, n := range []int{1<<32 + 1, 1 << 40} {
			q, err := f.ReadAsync(n, 0)
			if err != nil {
				t.Errorf("ReadAsync(%d) = %v", n, err)
				continue
			}
			out, err := event.Await(ctx, event.Any(), q)
			if err == nil {
				err = out[0].Err
			}
			if err != nil || !bytes.Equal(out[0].Result.([]byte), want) {
				t.Errorf("ReadAsync(%d) of an 11-byte file = %q, %v; want %q", n, out[0].Result, err, want)
			}
		}
	})
}

// TestIOHugeReadAsync: a stream read request for 1 TiB completes with the
// bytes there are.
func TestIOHugeReadAsync(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		c, s := v.pair(t)
		uv.UvtMust(t, s.Send([]byte("hi")))
		f, err := c.ReadAsync(1 << 40)
		uv.UvtMust(t, err)
		ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
		defer cancel()
		if b, err := event.AwaitValue(ctx, f); string(b) != "hi" || err != nil {
			t.Errorf("ReadAsync(1<<40) = %q, %v; want \"hi\"", b, err)
		}
		v.finish(t, c, s)
	})
}
