package uv_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/uvevent/uvevent/uv"
)

// A Write cut short by its deadline while it waits behind a Send, a
// WriteAsync and another goroutine's Write reports exactly the bytes it
// handed over: each writer retrying its rest until all is written, the
// peer reads every byte once, each writer's bytes in order, and nothing
// more. A deadline already past sends nothing and says so.
func TestIOWriteDeadlineBehindQueue(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		c, s := v.pair(t)
		const size = 2 << 20
		// Each writer writes records tagged with its own byte, so that the
		// peer can take the stream apart again.
		tagged := func(tag byte) []byte { return bytes.Repeat([]byte{tag}, size) }
		got := slowReader(io.LimitReader(s, 4*size))

		uv.UvtMust(t, c.SetWriteDeadline(time.Now().Add(-time.Second)))
		if n, err := c.Write(tagged('x')); n != 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("Write past its deadline = %d, %v; want 0 and a timeout", n, err)
		}
		uv.UvtMust(t, c.SetWriteDeadline(time.Time{}))

		uv.UvtMust(t, c.Send(tagged('s')))
		f, err := c.WriteAsync(tagged('a'))
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for _, tag := range []byte{'1', '2'} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				giveUp := time.Now().Add(uv.UvtSafety)
				for p := tagged(tag); len(p) > 0; {
					if time.Now().After(giveUp) {
						t.Errorf("writer %c: %d bytes unwritten at the safety deadline", tag, len(p))
						return
					}
					// Both writers set the deadline: each Write sees one
					// a few milliseconds away.
					c.SetWriteDeadline(time.Now().Add(3 * time.Millisecond))
					n, err := c.Write(p)
					if n < 0 || n > len(p) {
						t.Errorf("writer %c: Write reports %d of %d bytes", tag, n, len(p))
						return
					}
					p = p[n:]
					if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
						t.Errorf("writer %c: Write = %d, %v; want a timeout or success", tag, n, err)
						return
					}
				}
			}()
		}
		wg.Wait()
		uv.UvtMust(t, c.SetWriteDeadline(time.Time{}))
		ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
		defer cancel()
		if _, err := f.Await(ctx); err != nil {
			t.Errorf("WriteAsync: %v", err)
		}
		b := uv.UvtRecv(t, got, "the peer's reads")
		counts := map[byte]int{}
		for _, x := range b {
			counts[x]++
		}
		for _, tag := range []byte{'s', 'a', '1', '2'} {
			if counts[tag] != size {
				t.Errorf("the peer read %d bytes of %q, want %d", counts[tag], tag, size)
			}
		}
		if counts['x'] != 0 {
			t.Errorf("the peer read %d bytes of a Write past its deadline, want none", counts['x'])
		}
		uv.UvtMust(t, c.CloseWrite())
		if rest, err := io.ReadAll(s); err != nil || len(rest) != 0 {
			t.Errorf("after the writes, the peer read %d more bytes (%v), want none", len(rest), err)
		}
		v.finish(t, c, s)
	})
}
