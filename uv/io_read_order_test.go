package uv_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"testing"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/uv"
)

// These tests pin the order of an IO's reads as the way of reading
// changes: blocking Reads, then callbacks, then Reads again; a read
// request made while a Read waits; a Read cut short by its deadline; a
// Read waiting when the peer resets.

// readN reads exactly n bytes from c with blocking Reads.
func readN(t *testing.T, c *uv.IO, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if _, err := io.ReadFull(c, b); err != nil {
		t.Fatalf("reading %d bytes: %v", n, err)
	}
	return b
}

// TestIOReadModesInOrder: bytes read by blocking Reads, then by the
// callbacks of the started IO, then by Reads again once it is stopped,
// are the stream's, each once, in order.
func TestIOReadModesInOrder(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		c, s := v.pair(t)
		data := pattern(3 << 20)
		go s.Write(data)
		var got bytes.Buffer
		got.Write(readN(t, c, 1<<20))
		enough := make(chan struct{})
		tell := enough // the callbacks' (on the loop)
		var calls []byte
		if _, err := event.Subscribe(c, func(_ event.Event, res any, err error) {
			if b, ok := readOf(res); ok {
				calls = append(calls, b...)
				if len(calls) >= 1<<20 && tell != nil {
					c.Stop()
					close(tell)
					tell = nil
				}
			}
		}); err != nil {
			t.Fatal(err)
		}
		uv.UvtMust(t, v.u.Reactor.Call(func() { uv.UvtMust(t, c.Start()) }))
		uv.UvtRecv(t, enough, "a MiB through the callbacks")
		uv.UvtMust(t, v.u.Reactor.Call(func() { got.Write(calls) }))
		got.Write(readN(t, c, len(data)-got.Len()))
		if !bytes.Equal(got.Bytes(), data) {
			t.Errorf("read %d bytes, first difference at %d: want the %d sent, once each, in order", got.Len(), firstDiff(got.Bytes(), data), len(data))
		}
		v.finish(t, c, s)
	})
}

// TestIOReadAsyncBehindRead: a read request made while a blocking Read
// waits gets the bytes after the Read's.
func TestIOReadAsyncBehindRead(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		c, s := v.pair(t)
		first := make(chan []byte, 1)
		go func() {
			b := make([]byte, 5)
			n, err := c.Read(b)
			if err != nil {
				t.Errorf("Read: %v", err)
			}
			first <- b[:n]
		}()
		time.Sleep(10 * time.Millisecond) // the Read waits first (the outcome holds either way)
		f, err := c.ReadAsync(5)
		uv.UvtMust(t, err)
		_, err = s.Write([]byte("12345"))
		uv.UvtMust(t, err)
		a := uv.UvtRecv(t, first, "the Read")
		// Whichever waited first got the first bytes; the other gets the
		// rest once they come.
		_, err = s.Write([]byte("67890"))
		uv.UvtMust(t, err)
		ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
		defer cancel()
		b, err := event.AwaitValue[[]byte](ctx, f)
		uv.UvtMust(t, err)
		got := string(a) + string(b)
		if got != "1234567890" && string(b)+string(a) != "1234567890" {
			t.Errorf("the Read got %q and the request %q: want the ten bytes between them, each once, in order", a, b)
		}
		var rest bytes.Buffer
		for rest.Len()+len(a)+len(b) < 10 {
			p := make([]byte, 10)
			n, err := c.Read(p)
			uv.UvtMust(t, err)
			rest.Write(p[:n])
		}
		if n := len(a) + len(b) + rest.Len(); n != 10 {
			t.Errorf("read %d bytes in all, want 10", n)
		}
		v.finish(t, c, s)
	})
}

// TestIOReadDeadlineThenData: a Read cut short by its deadline takes no
// byte: once the deadline is cleared, the next Reads get every byte sent.
func TestIOReadDeadlineThenData(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		c, s := v.pair(t)
		for i := range 3 {
			uv.UvtMust(t, c.SetReadDeadline(time.Now().Add(5*time.Millisecond)))
			n, err := c.Read(make([]byte, 10))
			if n != 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("Read past the deadline = %d, %v; want 0 and a timeout", n, err)
			}
			uv.UvtMust(t, c.SetReadDeadline(time.Time{}))
			msg := []byte{'a' + byte(i), 'b' + byte(i)}
			_, err = s.Write(msg)
			uv.UvtMust(t, err)
			if b := readN(t, c, 2); !bytes.Equal(b, msg) {
				t.Fatalf("read %q after the timeout, want %q", b, msg)
			}
		}
		// A deadline already passed fails the Read at once, even with
		// bytes waiting.
		_, err := s.Write([]byte("xy"))
		uv.UvtMust(t, err)
		uv.UvtMust(t, c.SetReadDeadline(time.Now().Add(-time.Second)))
		if n, err := c.Read(make([]byte, 10)); n != 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("Read with the deadline passed = %d, %v; want 0 and a timeout", n, err)
		}
		uv.UvtMust(t, c.SetReadDeadline(time.Time{}))
		if b := readN(t, c, 2); string(b) != "xy" {
			t.Fatalf("read %q, want %q", b, "xy")
		}
		v.finish(t, c, s)
	})
}

// TestIOReadPeerEnds: a Read waiting when the peer closes gets io.EOF
// after the last byte, and so does every Read after it.
func TestIOReadPeerEnds(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		c, s := v.pair(t)
		got := make(chan error, 1)
		go func() {
			b, err := io.ReadAll(c)
			if string(b) != "last" {
				t.Errorf("read %q before the end, want %q", b, "last")
			}
			got <- err
		}()
		time.Sleep(5 * time.Millisecond)
		_, err := s.Write([]byte("last"))
		uv.UvtMust(t, err)
		uv.UvtMust(t, s.Close())
		uv.UvtMust(t, uv.UvtRecv(t, got, "the reader's end"))
		for range 2 {
			if n, err := c.Read(make([]byte, 4)); n != 0 || err != io.EOF {
				t.Errorf("Read after the end = %d, %v; want 0, io.EOF", n, err)
			}
		}
		v.finish(t, c)
	})
}

// TestIOStartWhileReadWaits: an IO started while a blocking Read waits:
// the Read gets the first bytes to come, the callbacks the ones after, each
// once, in order.
func TestIOStartWhileReadWaits(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		c, s := v.pair(t)
		_, err := s.Write([]byte("w"))
		uv.UvtMust(t, err)
		readN(t, c, 1) // a Read before: the next ones go their usual way
		first := make(chan []byte, 1)
		go func() {
			b := make([]byte, 64)
			n, err := c.Read(b)
			if err != nil {
				t.Errorf("Read: %v", err)
			}
			first <- b[:n]
		}()
		time.Sleep(10 * time.Millisecond) // the Read waits first (the outcome holds either way)
		var calls []byte
		if _, err := event.Subscribe(c, func(_ event.Event, res any, _ error) {
			if b, ok := readOf(res); ok {
				calls = append(calls, b...)
			}
		}); err != nil {
			t.Fatal(err)
		}
		uv.UvtMust(t, v.u.Reactor.Call(func() { uv.UvtMust(t, c.Start()) }))
		_, err = s.Write([]byte("abc"))
		uv.UvtMust(t, err)
		a := uv.UvtRecv(t, first, "the Read")
		_, err = s.Write([]byte("def"))
		uv.UvtMust(t, err)
		var got string
		uv.UvtWaitFor(t, "every byte read", func() bool {
			uv.UvtMust(t, v.u.Reactor.Call(func() { got = string(a) + string(calls) }))
			return len(got) >= 6
		})
		if got != "abcdef" {
			t.Errorf("the Read got %q and the callbacks %q: want %q between them, in order", a, got[len(a):], "abcdef")
		}
		v.finish(t, c, s)
	})
}

// TestIOCloseWakesRead: Close wakes a Read waiting (after an earlier Read
// served) with ErrClosed, and the descriptor is closed once it returned.
func TestIOCloseWakesRead(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		c, s := v.pair(t)
		_, err := s.Write([]byte("w"))
		uv.UvtMust(t, err)
		readN(t, c, 1)
		got := make(chan error, 1)
		go func() {
			_, err := c.Read(make([]byte, 8))
			got <- err
		}()
		time.Sleep(10 * time.Millisecond) // the Read waits first (the outcome holds either way)
		before := uv.UvtOpenFDs(t)
		uv.UvtMust(t, c.Close())
		if err := uv.UvtRecv(t, got, "the Read's end"); !errors.Is(err, uv.ErrClosed) {
			t.Errorf("Read waiting at Close = %v, want ErrClosed", err)
		}
		uv.UvtWaitFor(t, "the descriptor closed", func() bool { return uv.UvtOpenFDs(t) < before })
		v.finish(t, s)
	})
}
