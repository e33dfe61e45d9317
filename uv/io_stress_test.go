package uv_test

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"io"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/uv"
)

// TestIOStartStopChurn: Stop and Start from another goroutine, over
// and over, while a burst flows into the callbacks: they get every byte,
// once and in order (bytes read while stopped are kept and handed over
// first at the next Start).
func TestIOStartStopChurn(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		c, s := v.pair(t)
		data := pattern(8 << 20)
		var got []byte // loop-owned
		var end error
		ended := make(chan struct{})
		_, err := event.Subscribe(c, func(_ event.Event, res any, err error) {
			if b, ok := readOf(res); ok {
				got = append(got, b...)
			}
			if err != nil && end == nil {
				end = err
				close(ended)
			}
		})
		uv.UvtMust(t, err)
		uv.UvtMust(t, c.Start())
		sent := make(chan error, 1)
		go func() {
			_, err := s.Write(data)
			if err == nil {
				err = s.CloseWrite()
			}
			sent <- err
		}()
		// The safety deadline only turns a hang into a failure.
		for deadline := time.Now().Add(uv.UvtSafety); ; {
			select {
			case <-ended:
			default:
				if time.Now().After(deadline) {
					t.Fatal("the stream's end never reached the callbacks")
				}
				uv.UvtMust(t, c.Stop())
				uv.UvtMust(t, c.Start())
				continue
			}
			break
		}
		uv.UvtMust(t, uv.UvtRecv(t, sent, "the writer's end"))
		uv.UvtMust(t, v.u.Call(func() {
			if end != io.EOF || !bytes.Equal(got, data) {
				t.Errorf("callbacks got %d bytes ending with %v, want the %d sent, then io.EOF", len(got), end, len(data))
			}
		}))
		v.finish(t, c, s)
	})
}

// TestIOTwoReadersTwoWriters: two goroutines write tagged records to
// one IO while two others read from it, against an echoing peer: each
// Write goes out whole (records never interleave), and between them the
// readers get every byte once.
func TestIOTwoReadersTwoWriters(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		c, s := v.pair(t)
		go io.Copy(s, s)
		const records, size = 300, 8 << 10
		var wg sync.WaitGroup
		var mu sync.Mutex
		counts := map[byte]int{}
		total := 0
		for _, tag := range []byte{'a', 'b'} {
			wg.Add(2)
			go func() {
				defer wg.Done()
				rec := bytes.Repeat([]byte{tag}, size)
				for range records {
					if _, err := c.Write(rec); err != nil {
						t.Errorf("Write: %v", err)
						return
					}
				}
			}()
			go func() {
				defer wg.Done()
				b := make([]byte, 5000) // not a record's size
				for {
					mu.Lock()
					done := total == 2*records*size
					mu.Unlock()
					if done {
						return
					}
					n, err := c.Read(b)
					mu.Lock()
					for _, x := range b[:n] {
						counts[x]++
					}
					total += n
					mu.Unlock()
					if err != nil {
						if !errors.Is(err, uv.ErrClosed) {
							t.Errorf("Read: %v", err)
						}
						return
					}
				}
			}()
		}
		uv.UvtWaitFor(t, "every byte echoed", func() bool {
			mu.Lock()
			defer mu.Unlock()
			return total >= 2*records*size
		})
		uv.UvtMust(t, c.Close()) // the reader still waiting gets ErrClosed
		wg.Wait()
		if counts['a'] != records*size || counts['b'] != records*size || len(counts) != 2 {
			t.Errorf("bytes read by tag: %v, want %d of each of a and b", counts, records*size)
		}
		v.finish(t, s)
	})
}

// TestIOManySmallWrites: a hundred thousand small Sends queued on the
// loop behind a big one the peer does not read yet, then many small
// blocking Writes: every byte goes out, in order.
func TestIOManySmallWrites(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		c, s := v.pair(t)
		const big, sends, writes = 8 << 20, 100_000, 5_000
		data := pattern(big + sends*7 + writes*13)
		uv.UvtMust(t, c.SetHighWaterMark(math.MaxInt)) // every Send is queued, past 1 MiB
		uv.UvtMust(t, v.u.Call(func() {
			uv.UvtMust(t, c.Send(data[:big]))
			for i := range sends {
				uv.UvtMust(t, c.Send(data[big+i*7:big+(i+1)*7]))
			}
		}))
		if q := c.Queued(); q < sends*7 {
			t.Errorf("Queued = %d, want the %d bytes of the small Sends at least", q, sends*7)
		}
		go func() {
			rest := data[big+sends*7:]
			for i := range writes {
				if _, err := c.Write(rest[i*13 : (i+1)*13]); err != nil {
					t.Errorf("Write: %v", err)
					return
				}
			}
			c.CloseWrite()
		}()
		got, err := io.ReadAll(s)
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("read %d bytes (%v), want the %d written, in order", len(got), err, len(data))
		}
		v.finish(t, c, s)
	})
}

// TestIO64MiBBothWays: 64 MiB each way at once over one connection,
// one end reading through its callbacks, the other through Read.
func TestIO64MiBBothWays(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		c, s := v.pair(t)
		const total = 64 << 20
		data := bytes.Repeat(pattern(251*4096), total/(251*4096)+1)[:total]
		want := sha256.Sum256(data)
		h := sha256.New() // c's callbacks, loop-owned
		n := 0
		ended := make(chan error, 1)
		_, err := event.Subscribe(c, func(_ event.Event, res any, err error) {
			if b, ok := readOf(res); ok {
				h.Write(b)
				n += len(b)
			}
			if err != nil {
				ended <- err
			}
		})
		uv.UvtMust(t, err)
		uv.UvtMust(t, c.Start())
		errs := make(chan error, 2)
		for _, x := range []*uv.IO{c, s} {
			go func() {
				_, err := x.Write(data)
				if err == nil {
					err = x.CloseWrite()
				}
				errs <- err
			}()
		}
		hs := sha256.New()
		if k, err := io.CopyBuffer(hs, s, make([]byte, 64<<10)); err != nil || k != total || !bytes.Equal(hs.Sum(nil), want[:]) {
			t.Errorf("s read %d bytes (%v), want the %d written", k, err, total)
		}
		if err := uv.UvtRecv(t, ended, "c's end of the stream"); err != io.EOF {
			t.Errorf("c's callbacks ended with %v, want io.EOF", err)
		}
		uv.UvtMust(t, v.u.Call(func() {
			if n != total || !bytes.Equal(h.Sum(nil), want[:]) {
				t.Errorf("c's callbacks got %d bytes, want the %d written", n, total)
			}
		}))
		for range 2 {
			uv.UvtMust(t, uv.UvtRecv(t, errs, "a writer's end"))
		}
		v.finish(t, c, s)
	})
}
