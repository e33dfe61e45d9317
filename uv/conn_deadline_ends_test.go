package uv_test

import (
	"errors"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/uvevent/uvevent/uv"
)

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
