package uv_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/uvevent/uvevent/uv"
)

// These tests pin the order of an IO's writes however they are made:
// blocking Writes from several goroutines at once (each goes out whole,
// never interleaved with another), Sends made on the loop meanwhile, and
// a Write after a Send still queued; and the deadline and Close rules of a
// blocking Write.

// record is one write of the order tests: a header (tag, sequence number,
// body length) and a body of the tag byte.
func record(tag byte, seq uint32, size int) []byte {
	p := make([]byte, 9+size)
	p[0] = tag
	binary.BigEndian.PutUint32(p[1:], seq)
	binary.BigEndian.PutUint32(p[5:], uint32(size))
	for i := 9; i < len(p); i++ {
		p[i] = tag
	}
	return p
}

// readRecords reads records from r until io.EOF and checks each is whole
// and each tag's come in sequence; it returns the count per tag.
func readRecords(r io.Reader) (map[byte]int, error) {
	next := map[byte]uint32{}
	var h [9]byte
	for {
		if _, err := io.ReadFull(r, h[:]); err != nil {
			if err == io.EOF {
				return map[byte]int{'a': int(next['a']), 'b': int(next['b']), 'c': int(next['c']), 'L': int(next['L'])}, nil
			}
			return nil, fmt.Errorf("reading a header: %w", err)
		}
		tag, seq, size := h[0], binary.BigEndian.Uint32(h[1:]), binary.BigEndian.Uint32(h[5:])
		if seq != next[tag] {
			return nil, fmt.Errorf("record %q #%d (%d bytes) came where #%d was due: records interleaved or reordered", tag, seq, size, next[tag])
		}
		next[tag]++
		body := make([]byte, size)
		if _, err := io.ReadFull(r, body); err != nil {
			return nil, fmt.Errorf("reading record %q #%d: %w", tag, seq, err)
		}
		if i := bytes.IndexFunc(body, func(x rune) bool { return byte(x) != tag }); i >= 0 {
			return nil, fmt.Errorf("record %q #%d holds byte %q at %d: another write went inside it", tag, seq, body[i], i)
		}
	}
}

// TestIOWriteRecordsWhole: three goroutines Write records (small, and big
// enough that the socket takes them in parts) while the loop Sends records
// of its own: every record arrives whole, and each writer's in the order it
// wrote them. On both drivers.
func TestIOWriteRecordsWhole(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		c, s := v.pair(t)
		type result struct {
			counts map[byte]int
			err    error
		}
		got := make(chan result, 1)
		go func() {
			counts, err := readRecords(s)
			got <- result{counts, err}
		}()
		sizes := []int{1, 100, 1 << 10, 64 << 10, 700 << 10, 3 << 20}
		uv.UvtMust(t, c.SetHighWaterMark(math.MaxInt)) // the Sends must all be taken, whatever the Writes queue
		const perWriter = 40
		var wg sync.WaitGroup
		for _, tag := range []byte{'a', 'b', 'c'} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range perWriter {
					if _, err := c.Write(record(tag, uint32(i), sizes[(i+int(tag))%len(sizes)])); err != nil {
						t.Errorf("Write %q #%d: %v", tag, i, err)
						return
					}
				}
			}()
		}
		var sent atomic.Int32
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 3 * perWriter {
				done := make(chan error, 1)
				if err := v.u.Reactor.Post(func() { done <- c.Send(record('L', uint32(i), sizes[i%4])) }); err != nil {
					t.Errorf("Post: %v", err)
					return
				}
				if err := <-done; err != nil {
					t.Errorf("Send #%d on the loop: %v", i, err)
					return
				}
				sent.Add(1)
			}
		}()
		wg.Wait()
		uv.UvtMust(t, c.CloseWrite())
		r := uv.UvtRecv(t, got, "the peer's records")
		if r.err != nil {
			t.Fatal(r.err)
		}
		want := map[byte]int{'a': perWriter, 'b': perWriter, 'c': perWriter, 'L': int(sent.Load())}
		for tag, n := range want {
			if r.counts[tag] != n {
				t.Errorf("records %q: the peer read %d, want %d", tag, r.counts[tag], n)
			}
		}
		v.finish(t, c, s)
	})
}

// TestIOWriteBehindQueuedSend: a Write made while a Send is still queued
// (the peer not reading) goes out after it, never before or inside it.
func TestIOWriteBehindQueuedSend(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		c, s := v.pair(t)
		big := record('L', 0, 16<<20)
		uv.UvtMust(t, c.Send(big))
		if q := c.Queued(); q == 0 {
			t.Fatalf("Queued() = 0 after a 16 MiB Send the peer does not read: the test needs it queued")
		}
		wrote := make(chan error, 1)
		go func() {
			_, err := c.Write(record('a', 0, 10))
			wrote <- err
		}()
		got := make(chan []byte, 1)
		go func() {
			b, _ := io.ReadAll(s)
			got <- b
		}()
		uv.UvtMust(t, uv.UvtRecv(t, wrote, "the Write"))
		uv.UvtMust(t, c.CloseWrite())
		b := uv.UvtRecv(t, got, "the peer's bytes")
		want := append(big, record('a', 0, 10)...)
		if !bytes.Equal(b, want) {
			t.Errorf("the peer read %d bytes, first difference at %d; want the Send's %d then the Write's", len(b), firstDiff(b, want), len(big))
		}
		v.finish(t, c, s)
	})
}

// TestIOWritePastDeadline: with the write deadline passed, a Write sends
// nothing and times out at once; cleared, the next Write is the first
// thing the peer reads.
func TestIOWritePastDeadline(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		c, s := v.pair(t)
		for range 3 {
			uv.UvtMust(t, c.SetWriteDeadline(time.Now().Add(-time.Second)))
			n, err := c.Write([]byte("never"))
			if n != 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("Write past the deadline = %d, %v; want 0 and a timeout", n, err)
			}
			uv.UvtMust(t, c.SetWriteDeadline(time.Now().Add(time.Hour)))
			if _, err := c.Write([]byte("ok")); err != nil {
				t.Fatalf("Write with the deadline ahead: %v", err)
			}
		}
		uv.UvtMust(t, c.CloseWrite())
		b, err := io.ReadAll(s)
		uv.UvtMust(t, err)
		if string(b) != "okokok" {
			t.Errorf("the peer read %q, want %q", b, "okokok")
		}
		v.finish(t, c, s)
	})
}

// TestIOWriteCloseMidWrite: goroutines Write while the IO is closed: each
// Write succeeds or fails with ErrClosed, and the peer gets at least every
// byte reported written, in whole records up to the last.
func TestIOWriteCloseMidWrite(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		c, s := v.pair(t)
		got := make(chan int64, 1)
		go func() {
			n, _ := io.Copy(io.Discard, s)
			got <- n
		}()
		var reported atomic.Int64
		var wg sync.WaitGroup
		for _, tag := range []byte{'a', 'b'} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; ; i++ {
					n, err := c.Write(record(tag, uint32(i), 1+i%5000))
					reported.Add(int64(n))
					if err != nil {
						if !errors.Is(err, uv.ErrClosed) {
							t.Errorf("Write %q #%d = %d, %v; want success or ErrClosed", tag, i, n, err)
						}
						return
					}
				}
			}()
		}
		time.Sleep(20 * time.Millisecond) // some writes go out first (the outcome holds either way)
		uv.UvtMust(t, c.Close())
		wg.Wait()
		if n := uv.UvtRecv(t, got, "the peer's end"); n < reported.Load() {
			t.Errorf("the peer read %d bytes, fewer than the %d Writes reported", n, reported.Load())
		}
		v.finish(t, s)
	})
}
