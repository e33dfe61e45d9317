package uv_test

import (
	"errors"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
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

// TestIOFarFutureReadDeadline: a read deadline past the years an int64 of
// nanoseconds can hold (time.Date(3000, ...), as a "never" some programs
// use) times no Read out: every Read gets its bytes, the first (through
// the loop) and the later ones (on the pure-Go driver, its read lane).
func TestIOFarFutureReadDeadline(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		c, s := v.pair(t)
		uv.UvtMust(t, c.SetReadDeadline(time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)))
		for i := range 5 {
			_, err := s.Write([]byte{byte(i)})
			uv.UvtMust(t, err)
			b := make([]byte, 1)
			if n, err := c.Read(b); n != 1 || err != nil {
				t.Fatalf("Read %d with a deadline in the year 3000 = %d, %v; want its byte", i, n, err)
			}
		}
		if d := uv.UvtReadDeadline(c); d.Year() < 2262 {
			t.Errorf("the loop's read deadline is %v, want one far in the future", d)
		}
		v.finish(t, c, s)
	})
}

// TestIODeadlineSetAndClearedAtOnce: two goroutines setting and clearing
// the read deadline at once leave the deadline the loop holds, the later
// of the two, in force for every Read (on the pure-Go driver its read
// lane's wait had the deadline of the call whose end came last, which
// could be the earlier one: a cleared deadline still timed Reads out).
func TestIODeadlineSetAndClearedAtOnce(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		c, s := v.pair(t)
		_, err := s.Write([]byte{0})
		uv.UvtMust(t, err)
		readN(t, c, 1) // the first Read: on the pure-Go driver, the lane is made
		for i := range 200 {
			_, err := s.Write([]byte{byte(i)})
			uv.UvtMust(t, err)
			var wg sync.WaitGroup
			wg.Add(2)
			go func() { defer wg.Done(); c.SetReadDeadline(time.Now().Add(-time.Second)) }()
			go func() { defer wg.Done(); c.SetReadDeadline(time.Time{}) }()
			wg.Wait()
			held := uv.UvtReadDeadline(c)
			n, err := c.Read(make([]byte, 256))
			switch {
			case held.IsZero() && (n == 0 || err != nil):
				t.Fatalf("round %d: the deadline cleared last, yet Read = %d, %v", i, n, err)
			case !held.IsZero() && !errors.Is(err, os.ErrDeadlineExceeded):
				t.Fatalf("round %d: the deadline passed, set last, yet Read = %d, %v; want a timeout", i, n, err)
			}
			uv.UvtMust(t, c.SetReadDeadline(time.Time{}))
		}
		v.finish(t, c, s)
	})
}

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

		{
			// The loop held: both changes return, the passed deadline
			// is in effect at once (a Read of the read lane's too).
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

// TestIOReadDeadlinePassedOffLoopUnparked: a read deadline made to pass and
// removed off the loop (as net/http does to end its background Read after
// each request) while no Read is parked on the loop queues nothing to the
// loop, on either driver: a Read of the read lane has the deadline in its
// wait already, and a Read on its way to the loop finds it passed.
func TestIOReadDeadlinePassedOffLoopUnparked(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		v, c, s := lanePair(t, d)
		const rounds = 100
		before := v.u.Reactor.Stats().Queued
		for range rounds {
			uv.UvtMust(t, c.SetReadDeadline(time.Unix(1, 0)))
			if n, err := c.Read(make([]byte, 1)); n != 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("Read past the deadline = %d, %v; want a timeout", n, err)
			}
			uv.UvtMust(t, c.SetReadDeadline(time.Time{}))
		}
		if q := v.u.Reactor.Stats().Queued - before; q >= rounds/10 {
			t.Errorf("%d operations queued to the loop for %d deadlines passed and removed, want none but the Stats call's", q, rounds)
		}
		_, err := s.Write([]byte("y"))
		uv.UvtMust(t, err)
		if b := readN(t, c, 1); string(b) != "y" {
			t.Errorf("read %q after the deadline was removed, want %q", b, "y")
		}
		v.finish(t, c, s)
	})
}

// TestIOReadDeadlineEveryPastTime: a read deadline set anywhere in the
// past passes at once, whether or not it is as long ago as net/http's
// (time.Unix(1, 0), known to have passed without reading the clock): a
// Read of the read lane waiting fails with a timeout, the Reads after it
// too, and removing the deadline lets the next bytes through, on both
// drivers.
func TestIOReadDeadlineEveryPastTime(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		v, c, s := lanePair(t, d)
		pasts := []time.Time{
			time.Unix(1, 0),
			time.Unix(0, 0),
			time.Unix(1, 1),
			time.Unix(-1e10, 0),
			time.Now().Add(-time.Second),
			time.Now(),
		}
		for _, dl := range pasts {
			waiting := make(chan error, 1)
			go func() {
				_, err := c.Read(make([]byte, 1))
				waiting <- err
			}()
			time.Sleep(5 * time.Millisecond) // let the Read wait (either outcome is checked)
			uv.UvtMust(t, c.SetReadDeadline(dl))
			if err := uv.UvtRecv(t, waiting, "the waiting Read"); !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("deadline %v: the waiting Read = %v, want a timeout", dl, err)
			}
			if n, err := c.Read(make([]byte, 1)); n != 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("deadline %v: Read = %d, %v; want 0 and a timeout", dl, n, err)
			}
			if got := uv.UvtReadDeadline(c); !got.Before(time.Now()) {
				t.Fatalf("deadline %v: the IO holds %v, want a time passed", dl, got)
			}
			uv.UvtMust(t, c.SetReadDeadline(time.Time{}))
			_, err := s.Write([]byte("z"))
			uv.UvtMust(t, err)
			if b := readN(t, c, 1); string(b) != "z" {
				t.Fatalf("deadline %v: read %q after it was removed, want %q", dl, b, "z")
			}
		}
		v.finish(t, c, s)
	})
}

// TestIOReadDeadlinePassedOnLoopSubscriberSetsAgain: a deadline set in the
// past fails a parked ReadAsync, whose subscriber sets the read deadline
// again from its callback: nothing deadlocks (the deadline's lock is let go
// before the parked reads fail), on both drivers.
func TestIOReadDeadlinePassedOnLoopSubscriberSetsAgain(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		v, c, s := lanePair(t, d)
		failed := make(chan error, 1)
		uv.UvtMust(t, v.u.Call(func() {
			f, err := c.ReadAsync(1)
			if err != nil {
				failed <- err
				return
			}
			_, err = event.Subscribe(f, func(_ event.Event, _ any, err error) {
				if errors.Is(err, os.ErrDeadlineExceeded) {
					err = c.SetReadDeadline(time.Time{}) // on the loop, from the reads' failing
				}
				failed <- err
			})
			if err != nil {
				failed <- err
			}
		}))
		done := make(chan error, 1)
		go func() { done <- c.SetDeadline(time.Now().Add(-time.Second)) }()
		uv.UvtMust(t, uv.UvtRecv(t, done, "SetDeadline in the past"))
		uv.UvtMust(t, uv.UvtRecv(t, failed, "the parked ReadAsync's subscriber"))
		_, err := s.Write([]byte("y"))
		uv.UvtMust(t, err)
		if b := readN(t, c, 1); string(b) != "y" {
			t.Errorf("read %q after the subscriber removed the deadline, want %q", b, "y")
		}
		v.finish(t, c, s)
	})
}

// lanePair starts a reactor on driver d with a TCP connection whose client
// end c has made its read lane (a byte from s read by a blocking Read).
func lanePair(t *testing.T, d reactor.Driver) (v *ioEnv, c, s *uv.IO) {
	t.Helper()
	v = newIOEnv(t, d, "tcp4")
	c, s = v.pair(t)
	_, err := s.Write([]byte("x"))
	uv.UvtMust(t, err)
	readN(t, c, 1)
	return v, c, s
}
