package uv_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
	"golang.org/x/sys/unix"
)

func TestIOEchoBlocking(t *testing.T) {
	eachNetwork(t, func(t *testing.T, v *ioEnv) {
		c, s := v.pair(t)
		done := make(chan error, 1)
		go func() {
			_, err := io.Copy(s, s)
			done <- err
		}()
		msg := []byte("hello, uvevent")
		if _, err := c.Write(msg); err != nil {
			t.Fatal(err)
		}
		got := make([]byte, len(msg))
		if _, err := io.ReadFull(c, got); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(msg, got); diff != "" {
			t.Errorf("echo (-want +got):\n%s", diff)
		}
		if got, want := c.RemoteAddr().String(), v.ln.Addr().String(); got != want {
			t.Errorf("RemoteAddr = %s, want %s", got, want)
		}
		if got, want := s.LocalAddr().String(), v.ln.Addr().String(); got != want {
			t.Errorf("server LocalAddr = %s, want %s", got, want)
		}
		// Half-close: the server sees EOF, its copy ends, and it can
		// still answer on its writing side.
		if err := c.CloseWrite(); err != nil {
			t.Fatal(err)
		}
		if err := uv.UvtRecv(t, done, "server copy end"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Write([]byte("bye")); err != nil {
			t.Fatalf("server Write after the peer's CloseWrite: %v", err)
		}
		if err := s.CloseWrite(); err != nil {
			t.Fatal(err)
		}
		rest, err := io.ReadAll(c)
		if err != nil || string(rest) != "bye" {
			t.Errorf("client ReadAll = %q, %v; want \"bye\", nil", rest, err)
		}
		v.finish(t, c, s)
	})
}

// TestIOCallbacks echoes in callbacks: each read is a view of the C buffer,
// answered with Send, and the end of the stream is an io.EOF result.
func TestIOCallbacks(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		c, s := v.pair(t)
		ends := make(chan error, 1)
		_, err := event.Subscribe(s, func(ev event.Event, res any, err error) {
			if err != nil {
				ends <- err
				uv.IOOf(ev).Close()
				return
			}
			if serr := uv.IOOf(ev).Send(*res.(*[]byte)); serr != nil {
				t.Errorf("Send: %v", serr)
			}
		})
		uv.UvtMust(t, err)
		uv.UvtMust(t, s.Start())
		payload := bytes.Repeat([]byte("0123456789abcdef"), 64<<10) // 1 MiB
		go func() {
			c.Write(payload)
			c.CloseWrite()
		}()
		got, err := io.ReadAll(c)
		if err != nil {
			t.Fatalf("ReadAll: %v", err)
		}
		if !bytes.Equal(got, payload) {
			t.Fatalf("echoed %d bytes, want %d intact", len(got), len(payload))
		}
		if err := uv.UvtRecv(t, ends, "end of stream"); err != io.EOF {
			t.Errorf("end of stream = %v, want io.EOF", err)
		}
		if err := s.Start(); !errors.Is(err, event.ErrClosed) {
			t.Errorf("Start after Close = %v, want ErrClosed", err)
		}
		v.finish(t, c)
	})
}

// TestIO64MiB moves 64 MiB through a TCP pair, written in random sizes,
// and checks it arrives intact.
func TestIO64MiB(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		c, s := v.pair(t)
		const total = 64 << 20
		data := make([]byte, total)
		rng := rand.New(rand.NewPCG(1, 2))
		for i := range data {
			data[i] = byte(rng.Uint32())
		}
		go func() {
			for off := 0; off < total; {
				n := min(total-off, 1+rng.IntN(256<<10))
				if _, err := c.Write(data[off : off+n]); err != nil {
					t.Errorf("Write: %v", err)
					return
				}
				off += n
			}
			c.CloseWrite()
		}()
		h := sha256.New()
		n, err := io.CopyBuffer(h, s, make([]byte, 32<<10))
		if err != nil || n != total {
			t.Fatalf("read %d bytes, %v; want %d", n, err, total)
		}
		if got, want := h.Sum(nil), sha256.Sum256(data); !bytes.Equal(got, want[:]) {
			t.Fatal("the bytes read differ from the bytes written")
		}
		in, _, _ := s.Stats()
		if in != total {
			t.Errorf("Stats in = %d, want %d", in, total)
		}
		v.finish(t, c, s)
	})
}

// TestIOBigWrite: a write larger than the socket buffers waits in libuv
// (Queued shows it) and completes intact once the peer reads.
func TestIOBigWrite(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		c, s := v.pair(t)
		const size = 32 << 20
		data := bytes.Repeat([]byte{1, 2, 3, 4, 5, 6, 7}, size/7+1)[:size]
		f, err := c.WriteAsync(data)
		uv.UvtMust(t, err)
		if q := c.Queued(); q == 0 || q >= size {
			t.Errorf("Queued = %d with nobody reading, want 0 < q < %d", q, size)
		}
		got := make([]byte, size)
		if _, err := io.ReadFull(s, got); err != nil {
			t.Fatal(err)
		}
		out, err := event.Await(context.Background(), event.Any(), f)
		uv.UvtMust(t, err)
		if out[0].Err != nil || out[0].Result != size {
			t.Errorf("WriteAsync outcome = %v, %v; want %d", out[0].Result, out[0].Err, size)
		}
		if !bytes.Equal(got, data) {
			t.Error("the big write arrived altered")
		}
		if q := c.Queued(); q != 0 {
			t.Errorf("Queued = %d after the write completed", q)
		}
		v.finish(t, c, s)
	})
}

func TestIOReadAsync(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		c, s := v.pair(t)
		f, err := s.ReadAsync(4)
		uv.UvtMust(t, err)
		if _, err := c.Write([]byte("abcdef")); err != nil {
			t.Fatal(err)
		}
		out, err := event.Await(context.Background(), event.Any(), f)
		uv.UvtMust(t, err)
		if diff := cmp.Diff([]byte("abcd"), out[0].Result); diff != "" || out[0].Err != nil {
			t.Errorf("ReadAsync(4) = %q, %v", out[0].Result, out[0].Err)
		}
		// The rest was kept for the next read.
		f, err = s.ReadAsync(100)
		uv.UvtMust(t, err)
		out, err = event.Await(context.Background(), event.Any(), f)
		uv.UvtMust(t, err)
		if diff := cmp.Diff([]byte("ef"), out[0].Result); diff != "" {
			t.Errorf("second ReadAsync = %q, %v", out[0].Result, out[0].Err)
		}
		if _, err := s.ReadAsync(0); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("ReadAsync(0) = %v, want EINVAL", err)
		}
		v.finish(t, c, s)
	})
}

// TestIOCloseUnblocks: Close wakes a parked Read and a parked Write with
// an error matching net.ErrClosed and event.ErrClosed.
func TestIOCloseUnblocks(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		c, s := v.pair(t)
		errs := make(chan error, 2)
		go func() {
			_, err := c.Read(make([]byte, 10))
			errs <- err
		}()
		go func() {
			_, err := c.Write(make([]byte, 64<<20)) // more than the socket takes
			errs <- err
		}()
		uv.UvtWaitFor(t, "both parked", func() bool { return c.Queued() > 0 })
		uv.UvtMust(t, c.Close())
		for range 2 {
			err := uv.UvtRecv(t, errs, "unblocked call")
			if !errors.Is(err, net.ErrClosed) || !errors.Is(err, event.ErrClosed) {
				t.Errorf("parked call after Close = %v, want ErrClosed", err)
			}
		}
		if _, err := c.Read(make([]byte, 1)); !errors.Is(err, net.ErrClosed) {
			t.Errorf("Read after Close = %v", err)
		}
		if _, err := c.Write([]byte{1}); !errors.Is(err, net.ErrClosed) {
			t.Errorf("Write after Close = %v", err)
		}
		if err := c.Close(); err != nil {
			t.Errorf("second Close = %v, want nil", err)
		}
		v.finish(t, s)
	})
}

func TestIODeadlines(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		c, s := v.pair(t)
		// A deadline in the past fails at once; one to come fails the parked
		// read when it passes.
		uv.UvtMust(t, c.SetReadDeadline(time.Now().Add(-time.Second)))
		_, err := c.Read(make([]byte, 1))
		checkTimeout(t, "Read past the deadline", err)
		uv.UvtMust(t, c.SetReadDeadline(time.Now().Add(20*time.Millisecond)))
		_, err = c.Read(make([]byte, 1))
		checkTimeout(t, "parked Read", err)
		// No deadline: reads work again.
		uv.UvtMust(t, c.SetReadDeadline(time.Time{}))
		s.Write([]byte("x"))
		if n, err := c.Read(make([]byte, 1)); n != 1 || err != nil {
			t.Errorf("Read after clearing the deadline = %d, %v", n, err)
		}
		// A write nobody reads fills the socket and times out, having written
		// part of it.
		uv.UvtMust(t, c.SetWriteDeadline(time.Now().Add(20*time.Millisecond)))
		n, err := c.Write(make([]byte, 64<<20))
		checkTimeout(t, "parked Write", err)
		if n >= 64<<20 {
			t.Errorf("timed-out Write reports %d bytes written", n)
		}
		v.finish(t, c, s)
	})
}

func checkTimeout(t *testing.T, what string, err error) {
	t.Helper()
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("%s = %v, want a net.Error timeout matching os.ErrDeadlineExceeded", what, err)
	}
}

// TestIOTwoGoroutines reads and writes one connection from two goroutines
// at once, both ways.
func TestIOTwoGoroutines(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		c, s := v.pair(t)
		const total = 8 << 20
		data := bytes.Repeat([]byte("two goroutines "), total/15+1)[:total]
		errs := make(chan error, 4)
		for _, x := range []*uv.IO{c, s} {
			go func() {
				_, err := x.Write(data)
				errs <- err
			}()
			go func() {
				got := make([]byte, total)
				_, err := io.ReadFull(x, got)
				if err == nil && !bytes.Equal(got, data) {
					err = errors.New("bytes differ")
				}
				errs <- err
			}()
		}
		for range 4 {
			if err := uv.UvtRecv(t, errs, "goroutine end"); err != nil {
				t.Error(err)
			}
		}
		v.finish(t, c, s)
	})
}

// TestIOPeerReset: a peer closing with SO_LINGER 0 resets the connection;
// the read fails with ECONNRESET, and writes fail after it.
func TestIOPeerReset(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		done := make(chan *uv.IO, 1)
		go func() {
			s, err := v.ln.AcceptIO(context.Background())
			if err != nil {
				t.Errorf("AcceptIO: %v", err)
			}
			done <- s
		}()
		nc, err := net.Dial("tcp4", v.ln.Addr().String())
		uv.UvtMust(t, err)
		s := uv.UvtRecv(t, done, "accepted connection")
		nc.(*net.TCPConn).SetLinger(0)
		nc.Close()
		_, err = s.Read(make([]byte, 10))
		if !errors.Is(err, syscall.ECONNRESET) {
			t.Errorf("Read after the peer's reset = %v, want ECONNRESET", err)
		}
		v.finish(t, s)
	})
}

func TestDialErrors(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		addr := v.ln.Addr().String()
		v.ln.Close()
		// The port is free again: nobody listens there.
		_, err := uv.Dial(context.Background(), v.u.Reactor, "tcp4", addr)
		if !errors.Is(err, syscall.ECONNREFUSED) {
			t.Errorf("Dial to a closed port = %v, want ECONNREFUSED", err)
		}
		for _, tc := range []struct{ network, addr string }{
			{"udp", "127.0.0.1:1"},
			{"tcp", "127.0.0.1"},
			{"tcp", "127.0.0.1:99999"},
		} {
			if _, err := uv.Dial(context.Background(), v.u.Reactor, tc.network, tc.addr); err == nil {
				t.Errorf("Dial(%q, %q) succeeded", tc.network, tc.addr)
			}
		}
		if _, err := uv.DialAsync(nil, "tcp", "127.0.0.1:1"); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("DialAsync(nil reactor) = %v, want EINVAL", err)
		}
		v.finish(t)
	})
}

// TestIODisposedInFlight: write requests disposed while their bytes wait in
// libuv, then the IO closed under them: libuv cancels the writes, their C
// requests free themselves in their callbacks, nothing is reported and no
// handle or request is left (under -asan, nothing is touched after free).
func TestIODisposedInFlight(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		c, s := v.pair(t)
		big := make([]byte, 8<<20)
		// Fill the socket until a write waits in libuv; the writes queued
		// behind it cannot complete while nobody reads.
		var first *event.Future[int]
		for first == nil || first.Done() {
			if first != nil {
				first.Outcome() // taken by the socket at once: its result is seen
			}
			var err error
			first, err = c.WriteAsync(big)
			uv.UvtMust(t, err)
		}
		for range 3 {
			f, err := c.WriteAsync(big)
			uv.UvtMust(t, err)
			f.Dispose()
		}
		rf, err := c.ReadAsync(10) // nobody writes to c
		uv.UvtMust(t, err)
		rf.Dispose()
		uv.UvtMust(t, c.Close())
		uv.UvtMust(t, s.Close())
		if _, _, err := first.Outcome(); !errors.Is(err, net.ErrClosed) {
			t.Errorf("the write waiting at Close: %v, want ErrClosed", err)
		}
		v.finish(t)
	})
}

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
		before := uv.UvtOpenSockets(t)
		uv.UvtMust(t, c.Close())
		if err := uv.UvtRecv(t, got, "the Read's end"); !errors.Is(err, uv.ErrClosed) {
			t.Errorf("Read waiting at Close = %v, want ErrClosed", err)
		}
		uv.UvtWaitFor(t, "the socket closed", func() bool { return uv.UvtOpenSockets(t) < before })
		v.finish(t, s)
	})
}

// TestIOSendsOfATurnCrossOnce: on the libuv driver the Sends that a turn's
// callbacks make are tried together, in one call into the shim at the end
// of the turn's dispatch, not one call each. Eight socket pairs echo a
// byte back and forth in their callbacks, all on one loop, so each turn
// reads from eight sockets and answers eight: the run's crossings stay
// well below one per message (they were one per message for the tries
// alone, plus the turns). On the pure-Go driver nothing crosses.
func TestIOSendsOfATurnCrossOnce(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		const pairs, trips = 8, 200
		one := []byte{1}
		messages, closed := 0, 0 // loop-owned
		for range pairs {
			a, z, err := uv.Pipe(u.Reactor)
			uv.UvtMust(t, err)
			_, err = z.OnRead(func(p []byte, err error) {
				if err == nil {
					messages++
					z.Send(p)
				}
			})
			uv.UvtMust(t, err)
			n := 0
			_, err = a.OnRead(func(p []byte, err error) {
				if err != nil {
					return
				}
				messages++
				if n++; n == trips {
					a.Close()
					z.Close()
					closed++
					return
				}
				a.Send(one)
			})
			uv.UvtMust(t, err)
			uv.UvtMust(t, a.Start())
			uv.UvtMust(t, z.Start())
			uv.UvtMust(t, a.Send(one))
		}
		before := u.Stats().Crossings
		uv.UvtMust(t, u.Run(context.Background()))
		crossings := u.Stats().Crossings - before
		if closed != pairs || messages != 2*pairs*trips {
			t.Fatalf("%d pairs done, %d messages; want %d and %d", closed, messages, pairs, 2*pairs*trips)
		}
		perMsg := float64(crossings) / float64(messages)
		t.Logf("%d crossings for %d messages: %.3f per message", crossings, messages, perMsg)
		switch {
		case u.Driver() == reactor.DriverGo && crossings != 0:
			t.Errorf("%d crossings on the pure-Go driver, want 0", crossings)
		case u.Driver() == reactor.DriverLibuv && perMsg > 0.5:
			t.Errorf("%.3f crossings per message, want at most 0.5: the Sends of a turn are tried in one crossing", perMsg)
		}
		uv.UvtShutdown(t, u, false)
	})
}

// TestIOSendsOfATurnInOrder: many Sends made in one callback, more than
// the socket takes at once and more than one batch of tries holds (so
// some tries come short, later ones of the same IO are not made, and the
// batch is flushed in the middle of the callback), reach the peer whole
// and in order, on both drivers.
func TestIOSendsOfATurnInOrder(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		const chunk, chunks = 4 << 10, 300
		data := pattern(chunk * chunks)
		a, z, err := uv.Pipe(u.Reactor)
		uv.UvtMust(t, err)
		var got []byte // loop-owned
		_, err = z.OnRead(func(p []byte, err error) {
			if err != nil {
				z.Close()
				return
			}
			got = append(got, p...)
			if len(got) == len(data) {
				z.Close()
				a.Close()
			}
		})
		uv.UvtMust(t, err)
		sent := false
		_, err = a.OnRead(func(p []byte, err error) {
			if err != nil || sent {
				return
			}
			sent = true
			for i := range chunks {
				if err := a.Send(data[i*chunk : (i+1)*chunk]); err != nil {
					t.Errorf("Send %d: %v", i, err)
					return
				}
			}
		})
		uv.UvtMust(t, err)
		uv.UvtMust(t, a.Start())
		uv.UvtMust(t, z.Start())
		uv.UvtMust(t, z.Send([]byte("go"))) // a's callback sends when it reads this
		uv.UvtMust(t, u.Run(context.Background()))
		if !bytes.Equal(got, data) {
			i := 0
			for i < len(got) && i < len(data) && got[i] == data[i] {
				i++
			}
			t.Errorf("the peer read %d bytes, want %d; the first difference at %d", len(got), len(data), i)
		}
		uv.UvtShutdown(t, u, false)
	})
}

// manyConns is how many connections TestIOManyConnections holds open.
const manyConns = 10_000

// TestMain lets the test binary serve as the many-connections client.

// TestIOManyConnections holds 10,000 connections open on one reactor,
// echoing a byte on each in callbacks, then sees them all end.
func TestIOManyConnections(t *testing.T) {
	if testing.Short() {
		t.Skip("10,000 connections: not in -short")
	}
	var lim unix.Rlimit
	uv.UvtMust(t, unix.Getrlimit(unix.RLIMIT_NOFILE, &lim))
	if lim.Max < manyConns+1000 {
		t.Skipf("RLIMIT_NOFILE's hard limit %d is below %d", lim.Max, manyConns+1000)
	}
	old := lim
	lim.Cur = lim.Max
	uv.UvtMust(t, unix.Setrlimit(unix.RLIMIT_NOFILE, &lim))
	defer unix.Setrlimit(unix.RLIMIT_NOFILE, &old)

	u := uv.UvtNewReactor(t)
	stop := uv.UvtServe(t, u)
	ln, err := uv.ListenConfig{Backlog: 4096}.Listen(u.Reactor, "tcp4", "127.0.0.1:0")
	uv.UvtMust(t, err)
	// Each connection's callback holds its IO, which keeps it from the
	// collector until the callback closes it at the end of the stream.
	// Counted on the loop goroutine only.
	accepted, live := 0, 0
	ended := make(chan int, 1)
	_, err = event.Subscribe(ln, func(_ event.Event, res any, _ error) {
		c, ok := res.(*uv.IO)
		if !ok {
			return
		}
		accepted++
		live++
		event.Subscribe(c, func(_ event.Event, res any, rerr error) {
			if b, ok := readOf(res); ok && rerr == nil {
				rerr = c.Send(b)
			}
			if rerr == nil {
				return
			}
			c.Close()
			if live--; live == 0 && accepted == manyConns {
				ended <- accepted
			}
		})
		c.Start()
	})
	uv.UvtMust(t, err)
	uv.UvtMust(t, ln.Start())

	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "UVT_MANY_CLIENT="+ln.Addr().String(), "UVT_MANY_N="+strconv.Itoa(manyConns))
	stdin, err := cmd.StdinPipe()
	uv.UvtMust(t, err)
	stdout, err := cmd.StdoutPipe()
	uv.UvtMust(t, err)
	uv.UvtMust(t, cmd.Start())
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(stdout).ReadString('\n')
		line <- s
	}()
	if got := uv.UvtRecv(t, line, "the client's report"); got != "ok\n" {
		stdin.Close()
		cmd.Wait()
		t.Fatalf("client: %q", got)
	}
	held := 0
	uv.UvtMust(t, u.Call(func() { held = live }))
	if held != manyConns {
		t.Errorf("%d connections held, want %d", held, manyConns)
	}
	stdin.Close() // the client exits: every connection ends
	if n := uv.UvtRecv(t, ended, "every connection's end"); n != manyConns {
		t.Errorf("%d connections ended, want %d", n, manyConns)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("client: %v", err)
	}
	ln.Close()
	stop()
	uv.UvtShutdown(t, u, false)
}

// TestIOStaleReadiness: two polls ready in the same pass; the first
// callback to run closes the other poll and makes a new one over the same
// descriptor number (a fresh socket with nothing to read). What the closed
// descriptor had to report must not reach its successor: libuv drops the
// events of a closed watcher still waiting in the pass
// (uv__platform_invalidate_fd), and so must the pure-Go driver's poller.
// Its new poll would otherwise be told Readable with nothing to read (or,
// for a connect in flight on that number, that the connect completed).
func TestIOStaleReadiness(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		pair := func() [2]int {
			fds, err := uv.UvtSocketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
			uv.UvtMust(t, err)
			return fds
		}
		a, b := pair(), pair()
		for _, p := range [][2]int{a, b} {
			_, err := unix.Write(p[1], []byte("x"))
			uv.UvtMust(t, err)
		}
		var peers []int // the write ends, and the fresh sockets' peers
		defer func() {
			for _, fd := range append(peers, a[1], b[1]) {
				unix.Close(fd)
			}
		}()
		swapped := make(chan struct{})
		spurious := 0 // loop-owned
		var successor *uv.Poll
		var polls [2]*uv.Poll
		onReady := func(other *int) func(event.Event, any, error) {
			return func(ev event.Event, res any, err error) {
				if err != nil || successor != nil {
					return // the close of the other poll, or a later readiness
				}
				num := polls[*other].FD()
				uv.UvtMust(t, polls[*other].Close()) // its descriptor is closed with it
				fresh := pair()
				peers = append(peers, fresh[1])
				if fresh[0] != num { // the lowest number free is usually the one just closed
					uv.UvtMust(t, uv.UvtDup3(fresh[0], num))
					unix.Close(fresh[0])
				}
				p, err := uv.NewPoll(u.Reactor, num, uv.Readable, uv.PollOptions{CloseFD: true})
				uv.UvtMust(t, err)
				_, err = event.Subscribe(p, func(_ event.Event, res any, err error) { spurious++ })
				uv.UvtMust(t, err)
				uv.UvtMust(t, p.Start())
				successor = p
				close(swapped)
			}
		}
		zero, one := 0, 1
		uv.UvtMust(t, u.Call(func() {
			for i, fd := range []int{a[0], b[0]} {
				p, err := uv.NewPoll(u.Reactor, fd, uv.Readable, uv.PollOptions{CloseFD: true})
				uv.UvtMust(t, err)
				polls[i] = p
			}
			for i, other := range []*int{&one, &zero} {
				_, err := event.Subscribe(polls[i], onReady(other))
				uv.UvtMust(t, err)
				uv.UvtMust(t, polls[i].Start())
			}
		}))
		uv.UvtRecv(t, swapped, "the first poll's callback")
		// The pass that ran it is over once the loop runs this.
		n := -1
		uv.UvtMust(t, u.Call(func() { n = spurious }))
		if n != 0 {
			t.Errorf("the new poll over a reused descriptor was notified %d times, with nothing to read", n)
		}
		uv.UvtMust(t, u.Call(func() {
			for _, p := range append(polls[:], successor) {
				p.Close()
			}
		}))
		stop()
		uv.UvtShutdown(t, u, false)
	})
}

// The I/O kinds' zero values (architecture §2, rule 11): every method of a
// zero IO, Listener, UDP, Poll, PollProxy and File refuses with an error
// matching event.ErrNilEvent, or gives a zero answer, and never
// dereferences nil nor touches a descriptor (a zero File's 0 is stdin).
func TestZeroValueIOKindsAreRefused(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	p := make([]byte, 8)
	dl := time.Now().Add(time.Hour)
	udpTo := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9}
	errOf := func(_ any, err error) error { return err }
	cases := map[string]func() error{
		"IO.Read":             func() error { return errOf(new(uv.IO).Read(p)) },
		"IO.ReadAsync":        func() error { return errOf(new(uv.IO).ReadAsync(8)) },
		"IO.Write":            func() error { return errOf(new(uv.IO).Write(p)) },
		"IO.Send":             func() error { return new(uv.IO).Send(p) },
		"IO.WriteAsync":       func() error { return errOf(new(uv.IO).WriteAsync(p)) },
		"IO.CloseWrite":       func() error { return new(uv.IO).CloseWrite() },
		"IO.SetDeadline":      func() error { return new(uv.IO).SetDeadline(dl) },
		"IO.SetReadDeadline":  func() error { return new(uv.IO).SetReadDeadline(dl) },
		"IO.SetWriteDeadline": func() error { return new(uv.IO).SetWriteDeadline(dl) },
		"IO.SetNoDelay":       func() error { return new(uv.IO).SetNoDelay(true) },
		"IO.SetMode":          func() error { return new(uv.IO).SetMode(uv.TTYRaw) },
		"IO.WindowSize":       func() error { _, _, err := new(uv.IO).WindowSize(); return err },
		"IO.Close":            func() error { return new(uv.IO).Close() },
		"Listener.AcceptIO":   func() error { return errOf(new(uv.Listener).AcceptIO(ctx)) },
		"Listener.Accept":     func() error { return errOf(new(uv.Listener).Accept()) },
		"Listener.Close":      func() error { return new(uv.Listener).Close() },
		"UDP.ReadFrom":        func() error { _, _, err := new(uv.UDP).ReadFrom(p); return err },
		"UDP.WriteTo":         func() error { return errOf(new(uv.UDP).WriteTo(p, udpTo)) },
		"UDP.SetDeadline":     func() error { return new(uv.UDP).SetDeadline(dl) },
		"UDP.SetReadDeadline": func() error { return new(uv.UDP).SetReadDeadline(dl) },
		"UDP.Close":           func() error { return new(uv.UDP).Close() },
		"Poll.Start":          func() error { return new(uv.Poll).Start() },
		"PollProxy.Start":     func() error { return new(uv.PollProxy).Start() },
		"File.ReadAt":         func() error { return errOf(new(uv.File).ReadAt(p, 0)) },
		"File.WriteAt":        func() error { return errOf(new(uv.File).WriteAt(p, 0)) },
		"File.Read":           func() error { return errOf(new(uv.File).Read(p)) },
		"File.Write":          func() error { return errOf(new(uv.File).Write(p)) },
		"File.ReadAsync":      func() error { return errOf(new(uv.File).ReadAsync(context.Background(), 8, 0)) },
		"File.WriteAsync":     func() error { return errOf(new(uv.File).WriteAsync(context.Background(), p, 0)) },
		"File.Close":          func() error { return new(uv.File).Close() },
	}
	for name, fn := range cases {
		t.Run(name, func(t *testing.T) {
			var err error
			if perr := callBounded(func() { err = fn() }); perr != nil {
				t.Fatalf("zero value: %v", perr)
			}
			if !errors.Is(err, event.ErrNilEvent) {
				t.Errorf("got %v, want an error matching event.ErrNilEvent", err)
			}
			if _, ferr := unix.FcntlInt(0, unix.F_GETFD, 0); ferr != nil {
				t.Fatalf("descriptor 0 was closed: %v", ferr)
			}
		})
	}
	answers := map[string]func() any{
		"IO.LocalAddr":    func() any { return new(uv.IO).LocalAddr() },
		"IO.RemoteAddr":   func() any { return new(uv.IO).RemoteAddr() },
		"IO.Queued":       func() any { return new(uv.IO).Queued() },
		"IO.Stats":        func() any { a, b, c := new(uv.IO).Stats(); return a + b + c },
		"Listener.Addr":   func() any { return new(uv.Listener).Addr() },
		"UDP.LocalAddr":   func() any { return new(uv.UDP).LocalAddr() },
		"UDP.Queued":      func() any { return new(uv.UDP).Queued() },
		"Poll.FD":         func() any { return new(uv.Poll).FD() },
		"File.Name":       func() any { return new(uv.File).Name() },
		"PollProxy.Info":  func() any { return new(uv.PollProxy).Info() },
		"IO.Info":         func() any { return new(uv.IO).Info() },
		"Listener.Info":   func() any { return new(uv.Listener).Info() },
		"UDP.Info":        func() any { return new(uv.UDP).Info() },
		"IOOf(nil event)": func() any { return uv.IOOf(nil) == nil },
	}
	for name, fn := range answers {
		t.Run(name, func(t *testing.T) {
			var got any
			if perr := callBounded(func() { got = fn() }); perr != nil {
				t.Fatalf("zero value: %v", perr)
			}
			t.Logf("%s = %v", name, fmt.Sprint(got))
		})
	}
}

// TestIOClosedByReadAsyncCallback: a read brings more bytes than the
// parked ReadAsync takes, and that request's callback closes the IO. The
// rest of the read is nobody's: the closed IO keeps no buffer of it.
func TestIOClosedByReadAsyncCallback(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		client, server := v.pair(t)
		f, err := server.ReadAsync(1)
		uv.UvtMust(t, err)
		got := make(chan string, 1)
		event.Subscribe(f, func(_ event.Event, res any, err error) {
			p, _ := res.([]byte)
			server.Close()
			got <- string(p)
		})
		_, err = client.Write([]byte("abcdef"))
		uv.UvtMust(t, err)
		if s := uv.UvtRecv(t, got, "the read"); s != "a" {
			t.Errorf("the read = %q, want %q", s, "a")
		}
		if n, b := uv.UvtKept(server); n != 0 || b != 0 {
			t.Errorf("the closed IO keeps %d buffers (%d bytes), want none", n, b)
		}
		v.finish(t, client)
	})
}

// A ReadAsync whose future its holder closes stops counting as active at
// once: Run returns although no byte ever comes, and the IO's next reader
// gets the bytes that come later.
func TestReadAsyncClosedLetsRunEnd(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		a, b, err := uv.Pipe(u.Reactor)
		uv.UvtMust(t, err)
		f, err := a.ReadAsync(16)
		uv.UvtMust(t, err)
		uv.UvtMust(t, f.Close())
		ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
		defer cancel()
		if err := u.Run(ctx); err != nil {
			t.Fatalf("Run with only a closed read request left: %v", err)
		}
		if n := u.Stats().Active; n != 0 {
			t.Errorf("active after the request closed: %d, want 0", n)
		}
		g, err := a.ReadAsync(16)
		uv.UvtMust(t, err)
		uv.UvtMust(t, b.Send([]byte("later")))
		for !g.Done() {
			uv.UvtMust(t, u.RunOnce(ctx))
		}
		if got, _, err := g.Outcome(); err != nil || string(got) != "later" {
			t.Errorf("the next request got %q, %v; want \"later\"", got, err)
		}
		a.Close()
		b.Close()
		uv.UvtShutdown(t, u, false)
	})
}
