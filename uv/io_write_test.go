package uv_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/uv"
	"golang.org/x/sys/unix"
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

// TestIOWriteRetriesStayBounded: blocking Writes of 1 MiB to a peer that
// never reads, each timing out and retried, never hold more than 1 MiB
// beyond what the socket took, however often they time out (each used to
// leave its own 1 MiB queued: 20 retries, 20 MiB), and what they report
// written is exactly what the peer gets, in order.
func TestIOWriteRetriesStayBounded(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		c, s := v.pair(t)
		data := pattern(1 << 20)
		var sent bytes.Buffer
		p := data
		for i := range 20 {
			uv.UvtMust(t, c.SetWriteDeadline(time.Now().Add(5*time.Millisecond)))
			n, err := c.Write(p)
			if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("Write %d = %d, %v; want a timeout", i, n, err)
			}
			sent.Write(p[:n])
			if p = p[n:]; len(p) == 0 {
				p = data
			}
			if q := c.Queued(); q > 1<<20 {
				t.Fatalf("after %d timed-out Writes, %d bytes queued; want at most 1 MiB", i+1, q)
			}
		}
		uv.UvtMust(t, c.SetWriteDeadline(time.Time{}))
		read := make(chan []byte, 1)
		go func() {
			b, err := io.ReadAll(s)
			if err != nil {
				t.Errorf("the peer's read: %v", err)
			}
			read <- b
		}()
		uv.UvtMust(t, c.CloseWrite())
		got := uv.UvtRecv(t, read, "the peer's reads")
		if !bytes.Equal(got, sent.Bytes()) {
			t.Errorf("the peer read %d bytes (first difference at %d), want the %d reported written", len(got), firstDiff(got, sent.Bytes()), sent.Len())
		}
		v.finish(t, c, s)
	})
}

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

// pattern returns n bytes that tell their own offset apart (a counter
// modulo a prime), so a byte lost, doubled or moved shows.
func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i % 251)
	}
	return b
}

// rawReader reads fd until its end on a goroutine of its own and sends
// what it read.
func rawReader(fd int) <-chan []byte {
	got := make(chan []byte, 1)
	go func() {
		var all bytes.Buffer
		b := make([]byte, 64<<10)
		for {
			n, err := rawRead(fd, b)
			if n <= 0 || err != nil {
				break
			}
			all.Write(b[:n])
		}
		got <- all.Bytes()
	}()
	return got
}

// TestIORunFlushesWrites: bytes queued with Send and a CloseWrite
// made on the loop keep Run going until they are out, as libuv's write
// and shutdown requests in flight do (architecture §2, rule 6): a program
// that answers and then runs its loop does not lose the answer.
func TestIORunFlushesWrites(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		sp, err := uv.UvtSocketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
		uv.UvtMust(t, err)
		defer unix.Close(sp[1])
		a, err := uv.OpenPipe(u.Reactor, sp[0])
		uv.UvtMust(t, err)
		got := rawReader(sp[1]) // blocking reads of the peer's end
		data := pattern(4 << 20)
		uv.UvtMust(t, u.Call(func() {
			uv.UvtMust(t, a.Send(data)) // more than the socket takes at once
			uv.UvtMust(t, a.CloseWrite())
		}))
		if a.Queued() == 0 {
			t.Fatal("the socket took 4 MiB at once: nothing to wait for")
		}
		ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
		defer cancel()
		uv.UvtMust(t, u.Run(ctx))
		if n := a.Queued(); n != 0 {
			t.Errorf("Run returned with %d bytes still queued", n)
		}
		uv.UvtMust(t, a.Close()) // it would drop what is still queued
		if b := uv.UvtRecv(t, got, "the peer's end of the stream"); !bytes.Equal(b, data) {
			t.Errorf("the peer read %d bytes, want the %d sent", len(b), len(data))
		}
		uv.UvtShutdown(t, u, false)
	})
}

// TestIODrainBoundsAServer: a server written as ExampleIO_DrainAsync
// (Send below a high-water mark, DrainAsync above it) against a client
// that does not read: it stops producing with the queue bounded by the mark
// (plus one record), however much it has to send; once the client reads,
// the drain wait completes, the server goes on, and every byte arrives.
func TestIODrainBoundsAServer(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		const high, low, total = 1 << 20, 256 << 10, 32 << 20
		record := pattern(64 << 10)
		c, s := v.pair(t)
		stalled := make(chan int, 1) // the first stop
		var most atomic.Int64        // the most queued at a stop
		sent := 0
		var produce func()
		produce = func() {
			for sent < total {
				if q := s.Queued(); q >= high { // at the mark Send would refuse (ErrQueueFull)
					wait, err := s.DrainAsync(low)
					if err != nil {
						t.Errorf("DrainAsync: %v", err)
						return
					}
					if int64(q) > most.Load() {
						most.Store(int64(q))
					}
					select {
					case stalled <- q:
					default:
					}
					event.Subscribe(wait, func(_ event.Event, res any, err error) {
						if err != nil {
							t.Errorf("the drain wait failed: %v", err)
							return
						}
						if q := res.(int); q > low {
							t.Errorf("DrainAsync(%d) completed with %d queued", low, q)
						}
						produce()
					})
					return
				}
				if err := s.Send(record); err != nil {
					t.Errorf("Send: %v", err)
					return
				}
				sent += len(record)
			}
			s.CloseWrite()
		}
		uv.UvtMust(t, v.u.Call(produce))
		q := uv.UvtRecv(t, stalled, "the server stopping at its mark")
		if q > high+len(record) {
			t.Errorf("the server stopped with %d bytes queued, want at most %d", q, high+len(record))
		}
		if got := s.Queued(); got > high+len(record) {
			t.Errorf("with the client not reading, Queued = %d, want at most %d", got, high+len(record))
		}
		got, err := io.ReadAll(c)
		if err != nil || len(got) != total {
			t.Errorf("the client read %d bytes (%v), want %d", len(got), err, total)
		}
		if q := most.Load(); q > high+int64(len(record)) {
			t.Errorf("the server stopped with up to %d bytes queued, want at most %d", q, high+len(record))
		}
		v.finish(t, c, s)
	})
}

// TestIODrainAsync: at once when the queue is low enough already, ErrClosed
// when the IO closes first, EINVAL for a negative mark.
func TestIODrainAsync(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
		defer cancel()
		c, s := v.pair(t)
		f, err := c.DrainAsync(0)
		uv.UvtMust(t, err)
		if q, err := event.AwaitValue(ctx, f); q != 0 || err != nil {
			t.Errorf("DrainAsync(0) with nothing queued = %d, %v; want 0, nil", q, err)
		}
		if _, err := c.DrainAsync(-1); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("DrainAsync(-1) = %v, want EINVAL", err)
		}
		uv.UvtMust(t, c.Send(bytes.Repeat([]byte{1}, 16<<20)))
		f, err = c.DrainAsync(0)
		uv.UvtMust(t, err)
		uv.UvtMust(t, c.Close())
		if _, err := event.AwaitValue(ctx, f); !errors.Is(err, uv.ErrClosed) {
			t.Errorf("a drain wait when the IO closes = %v, want ErrClosed", err)
		}
		v.finish(t, s)
	})
}

// TestIOSendHighWaterMark: Send to a peer that never reads is refused with
// ErrQueueFull once the IO's queue reaches its high-water mark (1 MiB by
// default), queuing nothing of the refused bytes, so the queue stays at
// most the mark plus one Send; once the peer reads, OnDrain fires once and
// Send is taken again; the peer gets exactly the bytes Send took, in
// order, none twice.
func TestIOSendHighWaterMark(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		c, s := v.pair(t)
		if m := c.HighWaterMark(); m != 1<<20 {
			t.Fatalf("HighWaterMark() = %d; want 1 MiB by default", m)
		}
		var drains atomic.Int32
		drained := make(chan error, 4)
		if _, err := c.OnDrain(func(q int, err error) {
			drains.Add(1)
			drained <- err
		}); err != nil {
			t.Fatalf("OnDrain: %v", err)
		}
		const chunk = 64 << 10
		data := pattern(64 << 20)
		off := 0 // data[:off] is what Send took
		var refusal error
		for off+chunk <= len(data) {
			if refusal = c.Send(data[off : off+chunk]); refusal != nil {
				break
			}
			off += chunk
			if q := c.Queued(); q > uv.DefaultHighWaterMark+chunk {
				t.Fatalf("%d bytes queued after Sends of %d; want at most the mark plus one Send", q, off)
			}
		}
		if !errors.Is(refusal, uv.ErrQueueFull) {
			t.Fatalf("Send after %d bytes to a peer that never reads: %v; want ErrQueueFull", off, refusal)
		}
		q := c.Queued()
		if q < uv.DefaultHighWaterMark || q > uv.DefaultHighWaterMark+chunk {
			t.Fatalf("refused with %d bytes queued; want the mark to the mark plus one Send", q)
		}
		// Refused again: nothing of it is queued.
		if err := c.Send(data[off : off+chunk]); !errors.Is(err, uv.ErrQueueFull) {
			t.Fatalf("second Send past the mark: %v; want ErrQueueFull", err)
		}
		if q2 := c.Queued(); q2 != q {
			t.Fatalf("a refused Send changed the queue: %d then %d bytes", q, q2)
		}
		if n := drains.Load(); n != 0 {
			t.Fatalf("OnDrain fired %d times before the peer read", n)
		}
		read := make(chan []byte, 1)
		go func() {
			b, err := io.ReadAll(s)
			if err != nil {
				t.Errorf("the peer's read: %v", err)
			}
			read <- b
		}()
		if err := uv.UvtRecv(t, drained, "OnDrain once the peer reads"); err != nil {
			t.Fatalf("OnDrain: %v", err)
		}
		if err := c.Send(data[off : off+chunk]); err != nil {
			t.Fatalf("Send after OnDrain: %v", err)
		}
		off += chunk
		uv.UvtMust(t, c.CloseWrite())
		got := uv.UvtRecv(t, read, "the peer's reads")
		if !bytes.Equal(got, data[:off]) {
			t.Errorf("the peer read %d bytes (first difference at %d); want the %d Send took", len(got), firstDiff(got, data[:off]), off)
		}
		if n := drains.Load(); n != 1 {
			t.Errorf("OnDrain fired %d times; want once", n)
		}
		v.finish(t, c, s)
	})
}

// TestIOSetHighWaterMark: a mark of 0 refuses every Send while a byte
// waits, a negative one is refused with EINVAL, and the mark set is the one
// read back.
func TestIOSetHighWaterMark(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		c, s := v.pair(t)
		if err := c.SetHighWaterMark(-1); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("SetHighWaterMark(-1) = %v; want EINVAL", err)
		}
		uv.UvtMust(t, c.SetHighWaterMark(0))
		if m := c.HighWaterMark(); m != 0 {
			t.Errorf("HighWaterMark() = %d after SetHighWaterMark(0)", m)
		}
		data := pattern(1 << 20)
		var err error
		for i := 0; i < 64 && err == nil; i++ {
			err = c.Send(data)
		}
		if !errors.Is(err, uv.ErrQueueFull) {
			t.Fatalf("Sends of 1 MiB with a mark of 0: %v; want ErrQueueFull", err)
		}
		if q := c.Queued(); q > len(data) {
			t.Errorf("%d bytes queued with a mark of 0; want at most one Send", q)
		}
		v.finish(t, c, s)
		if err := c.SetHighWaterMark(1); !errors.Is(err, uv.ErrClosed) {
			t.Errorf("SetHighWaterMark on a closed IO = %v; want ErrClosed", err)
		}
	})
}
