package uv_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/uv"
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
