package uv_test

import (
	"errors"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/uvevent/uvevent/uv"
)

// TestIOClearDeadlineWithoutLoop: removing a deadline that is not set is
// answered on the caller's goroutine, as net/http does several times per
// request: it returns while the loop is busy. A deadline set, or passed,
// is still removed through the loop, and a closed IO still refuses.
func TestIOClearDeadlineWithoutLoop(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		c, s := v.pair(t)
		held, release := make(chan struct{}), make(chan struct{})
		var once sync.Once
		free := func() { once.Do(func() { close(release) }) }
		t.Cleanup(free) // a failed test lets the loop go
		uv.UvtMust(t, v.u.Reactor.Post(func() { close(held); <-release }))
		uv.UvtRecv(t, held, "the loop held")
		cleared := make(chan error, 1)
		go func() {
			err := c.SetReadDeadline(time.Time{})
			if err == nil {
				err = c.SetWriteDeadline(time.Time{})
			}
			if err == nil {
				err = c.SetDeadline(time.Time{})
			}
			cleared <- err
		}()
		err := uv.UvtRecv(t, cleared, "the deadlines removed while the loop is held")
		free()
		uv.UvtMust(t, err)

		// A deadline passed, then removed: the Read waits for the bytes.
		uv.UvtMust(t, c.SetReadDeadline(time.Now().Add(-time.Second)))
		if n, err := c.Read(make([]byte, 4)); n != 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("Read past the deadline = %d, %v; want 0 and a timeout", n, err)
		}
		uv.UvtMust(t, c.SetReadDeadline(time.Time{}))
		uv.UvtMust(t, c.SetReadDeadline(time.Time{}))
		_, err = s.Write([]byte("ab"))
		uv.UvtMust(t, err)
		if b := readN(t, c, 2); string(b) != "ab" {
			t.Fatalf("read %q after the deadline was removed, want %q", b, "ab")
		}

		// A deadline to come, then removed: it never fires.
		uv.UvtMust(t, c.SetReadDeadline(time.Now().Add(20*time.Millisecond)))
		uv.UvtMust(t, c.SetReadDeadline(time.Time{}))
		got := make(chan error, 1)
		go func() {
			_, err := c.Read(make([]byte, 4))
			got <- err
		}()
		time.Sleep(50 * time.Millisecond) // past the removed deadline
		_, err = s.Write([]byte("c"))
		uv.UvtMust(t, err)
		uv.UvtMust(t, uv.UvtRecv(t, got, "the Read after the deadline was removed"))

		// Closed, removing no deadline fails as net's does.
		uv.UvtMust(t, c.Close())
		for _, set := range []func(time.Time) error{c.SetReadDeadline, c.SetWriteDeadline, c.SetDeadline} {
			if err := set(time.Time{}); !errors.Is(err, uv.ErrClosed) {
				t.Errorf("removing a deadline of a closed IO = %v, want ErrClosed", err)
			}
		}
		v.finish(t, s)
	})
}
