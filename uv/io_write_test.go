package uv_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/uv"
)

// slowReader reads r to its end in small reads with pauses (the peer a
// deadline catches mid-write) and sends what it read.
func slowReader(r io.Reader) <-chan []byte {
	done := make(chan []byte, 1)
	go func() {
		var got bytes.Buffer
		buf := make([]byte, 32<<10)
		for i := 0; ; i++ {
			n, err := r.Read(buf)
			got.Write(buf[:n])
			if err != nil {
				break
			}
			if i%8 == 0 {
				time.Sleep(time.Millisecond)
			}
		}
		done <- got.Bytes()
	}()
	return done
}

// TestIOWriteDeadlineRetry: the net.Conn contract for a Write cut short by
// its deadline: exactly p[:n] goes out, so a caller retrying p[n:] until
// all is written sends every byte once, in order. Through the IO's Write
// and through it as a net.Conn, on both drivers.
func TestIOWriteDeadlineRetry(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		c, s := v.pair(t)
		data := pattern(8 << 20)
		for _, via := range []struct {
			name  string
			write func(p []byte) (int, error)
		}{
			{"IO.Write", c.Write},
			{"net.Conn", net.Conn(c).Write},
		} {
			got := slowReader(io.LimitReader(s, int64(len(data))))
			timeouts := 0
			giveUp := time.Now().Add(uv.UvtSafety) // a peer that stopped reading (it got more than was written) ends the test
			for p := data; len(p) > 0; {
				if time.Now().After(giveUp) {
					t.Fatalf("%s: %d bytes still unwritten at the safety deadline: the peer stopped reading", via.name, len(p))
				}
				uv.UvtMust(t, c.SetWriteDeadline(time.Now().Add(2*time.Millisecond)))
				n, err := via.write(p)
				if n < 0 || n > len(p) {
					t.Fatalf("%s: Write reports %d of %d bytes", via.name, n, len(p))
				}
				p = p[n:]
				if err != nil {
					if !errors.Is(err, os.ErrDeadlineExceeded) {
						t.Fatalf("%s: Write = %d, %v; want a timeout or success", via.name, n, err)
					}
					timeouts++
				}
			}
			uv.UvtMust(t, c.SetWriteDeadline(time.Time{}))
			b := uv.UvtRecv(t, got, "the peer's reads")
			if !bytes.Equal(b, data) {
				t.Errorf("%s: the peer read %d bytes (first difference at %d), want the %d written, once each",
					via.name, len(b), firstDiff(b, data), len(data))
			}
			t.Logf("%s: %d writes timed out", via.name, timeouts)
		}
		// Nothing more comes: no byte of a timed-out Write was left behind.
		uv.UvtMust(t, c.CloseWrite())
		if rest, err := io.ReadAll(s); err != nil || len(rest) != 0 {
			t.Errorf("after the writes, the peer read %d more bytes (%v), want none", len(rest), err)
		}
		v.finish(t, c, s)
	})
}

// firstDiff is the index of the first byte where a and b differ.
func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestIOGracefulEnd: Send of 8 MiB then CloseWriteAsync: the peer reads
// every byte then io.EOF, and the request completes once they are out, so a
// Close after it drops nothing. From a goroutine awaiting with a context,
// and from a callback subscribed to the request.
func TestIOGracefulEnd(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		data := pattern(8 << 20)
		ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
		defer cancel()

		c, s := v.pair(t)
		uv.UvtMust(t, c.Send(data))
		f, err := c.CloseWriteAsync()
		uv.UvtMust(t, err)
		got := slowReader(s)
		if _, err := event.AwaitValue(ctx, f); err != nil {
			t.Errorf("awaiting CloseWriteAsync: %v", err)
		}
		uv.UvtMust(t, c.Close())
		if b := uv.UvtRecv(t, got, "the peer's reads"); !bytes.Equal(b, data) {
			t.Errorf("from a goroutine: the peer read %d bytes, want %d then EOF", len(b), len(data))
		}

		// From a callback: Send, then CloseWriteAsync, and Close when it
		// completes.
		c2, s2 := v.pair(t)
		got2 := slowReader(s2)
		ended := make(chan error, 1)
		uv.UvtMust(t, v.u.Call(func() {
			if err := c2.Send(data); err != nil {
				ended <- err
				return
			}
			f, err := c2.CloseWriteAsync()
			if err != nil {
				ended <- err
				return
			}
			event.Subscribe(f, func(_ event.Event, _ any, err error) {
				c2.Close()
				ended <- err
			})
		}))
		uv.UvtMust(t, uv.UvtRecv(t, ended, "CloseWriteAsync's completion"))
		if b := uv.UvtRecv(t, got2, "the peer's reads"); !bytes.Equal(b, data) {
			t.Errorf("from a callback: the peer read %d bytes, want %d then EOF", len(b), len(data))
		}
		v.finish(t, s, s2)
	})
}

// TestIOCloseFailsDroppedWrites: Close drops what is not out yet, and each
// dropped write's request (and a blocking Write, and a CloseWriteAsync
// behind them) completes with ErrClosed.
func TestIOCloseFailsDroppedWrites(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
		defer cancel()
		c, s := v.pair(t)
		w, err := c.WriteAsync(pattern(8 << 20)) // nobody reads: it cannot all go out
		uv.UvtMust(t, err)
		q0 := c.Queued()
		blocked := make(chan error, 1)
		go func() { _, err := c.Write(pattern(4 << 20)); blocked <- err }()
		uv.UvtWaitFor(t, "the blocking Write queued", func() bool { return c.Queued() > q0+2<<20 })
		end, err := c.CloseWriteAsync()
		if err != nil {
			t.Fatalf("CloseWriteAsync: %v", err)
		}
		uv.UvtMust(t, c.Close())
		if _, err := event.AwaitValue(ctx, w); !errors.Is(err, uv.ErrClosed) {
			t.Errorf("a WriteAsync dropped by Close completes with %v, want ErrClosed", err)
		}
		if _, err := event.AwaitValue(ctx, end); !errors.Is(err, uv.ErrClosed) {
			t.Errorf("a CloseWriteAsync dropped by Close completes with %v, want ErrClosed", err)
		}
		if err := uv.UvtRecv(t, blocked, "the blocking Write"); !errors.Is(err, uv.ErrClosed) {
			t.Errorf("a Write dropped by Close = %v, want ErrClosed", err)
		}
		v.finish(t, s)
	})
}
