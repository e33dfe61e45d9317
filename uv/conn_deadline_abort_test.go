package uv_test

import (
	"errors"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// TestIOReadDeadlinePastAbortsParkedRead is net/http's abortPendingRead: a
// Read parked in another goroutine, the read deadline set in the past, which
// fails it with a timeout, then removed: the next Read waits for the bytes.
// A deadline to come replaced by one in the past never fires after it is
// removed. On the libuv driver (no read lane) the two changes return
// while the loop is busy: a deadline set in the past is published at once
// and the parked Reads fail on the loop afterwards.
func TestIOReadDeadlinePastAbortsParkedRead(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		v := newIOEnv(t, d, "tcp4")
		c, s := v.pair(t)
		for round := range 3 {
			parked := make(chan error, 1)
			go func() {
				_, err := c.Read(make([]byte, 1))
				parked <- err
			}()
			time.Sleep(10 * time.Millisecond) // let the Read park (either outcome is checked)
			uv.UvtMust(t, c.SetReadDeadline(time.Unix(1, 0)))
			if err := uv.UvtRecv(t, parked, "the parked Read"); !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("round %d: parked Read after a past deadline = %v, want a timeout", round, err)
			}
			if n, err := c.Read(make([]byte, 1)); n != 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("round %d: Read past the deadline = %d, %v; want 0 and a timeout", round, n, err)
			}
			uv.UvtMust(t, c.SetReadDeadline(time.Time{}))
			_, err := s.Write([]byte("x"))
			uv.UvtMust(t, err)
			if b := readN(t, c, 1); string(b) != "x" {
				t.Fatalf("round %d: read %q after the deadline was removed, want %q", round, b, "x")
			}
		}

		// A deadline to come, made to pass, then removed: its timer does
		// not fail a later Read.
		uv.UvtMust(t, c.SetReadDeadline(time.Now().Add(20*time.Millisecond)))
		uv.UvtMust(t, c.SetReadDeadline(time.Unix(1, 0)))
		uv.UvtMust(t, c.SetReadDeadline(time.Time{}))
		got := make(chan error, 1)
		go func() {
			_, err := c.Read(make([]byte, 1))
			got <- err
		}()
		time.Sleep(50 * time.Millisecond) // past the replaced deadline
		_, err := s.Write([]byte("y"))
		uv.UvtMust(t, err)
		uv.UvtMust(t, uv.UvtRecv(t, got, "the Read after the deadline was removed"))

		if d == reactor.DriverLibuv {
			// The loop held: both changes return, the passed deadline
			// is in effect at once.
			held, release := make(chan struct{}), make(chan struct{})
			var once sync.Once
			free := func() { once.Do(func() { close(release) }) }
			t.Cleanup(free)
			uv.UvtMust(t, v.u.Reactor.Post(func() { close(held); <-release }))
			uv.UvtRecv(t, held, "the loop held")
			done := make(chan error, 1)
			go func() {
				err := c.SetReadDeadline(time.Unix(1, 0))
				if err == nil {
					err = c.SetReadDeadline(time.Time{})
				}
				if err == nil {
					err = c.SetReadDeadline(time.Unix(1, 0))
				}
				done <- err
			}()
			err := uv.UvtRecv(t, done, "the read deadline set and removed while the loop is held")
			free()
			uv.UvtMust(t, err)
			if n, err := c.Read(make([]byte, 1)); n != 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("Read past the deadline = %d, %v; want 0 and a timeout", n, err)
			}
			uv.UvtMust(t, c.SetReadDeadline(time.Time{}))
		} else {
			t.Logf("%s driver: its read lane takes the deadline on the loop; the loop-free part is the libuv driver's", d)
		}

		// Closed: setting a deadline in the past or removing one fails.
		uv.UvtMust(t, c.Close())
		for _, dl := range []time.Time{time.Unix(1, 0), {}} {
			if err := c.SetReadDeadline(dl); !errors.Is(err, uv.ErrClosed) {
				t.Errorf("SetReadDeadline(%v) of a closed IO = %v, want ErrClosed", dl, err)
			}
		}
		v.finish(t, s)
	})
}
