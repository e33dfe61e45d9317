package uv_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/uv"
)

// These tests attack countWritten (uv/io_write.go) with writes queued
// behind the parked blocking Write: the transport's queue then holds their
// bytes too, the newest, and a Write charged with them would report fewer
// bytes than reached the kernel (a retry would send some twice), or, the
// other way, more (a retry would skip some). The tail's bytes are a value
// p never holds, so the reader's stream tells whose bytes it got.

// tailWriter queues b behind the parked Write, one way or another.
type tailWriter struct {
	name  string
	queue func(t *testing.T, u *uv.UvtReactor, w *uv.IO, b []byte) (await func() error)
}

// tailWriters are the ways a write can queue behind a parked Write: a
// Send made on the loop (a callback's), one from another goroutine, a
// Write made on the loop (which is a Send), a WriteAsync.
var tailWriters = []tailWriter{
	{"send-on-loop", func(t *testing.T, u *uv.UvtReactor, w *uv.IO, b []byte) func() error {
		var err error
		uv.UvtMust(t, u.Call(func() { err = w.Send(b) }))
		uv.UvtMust(t, err)
		return nil
	}},
	{"send", func(t *testing.T, u *uv.UvtReactor, w *uv.IO, b []byte) func() error {
		uv.UvtMust(t, w.Send(b))
		return nil
	}},
	{"write-on-loop", func(t *testing.T, u *uv.UvtReactor, w *uv.IO, b []byte) func() error {
		var err error
		uv.UvtMust(t, u.Call(func() { _, err = w.Write(b) }))
		uv.UvtMust(t, err)
		return nil
	}},
	{"writeasync", func(t *testing.T, u *uv.UvtReactor, w *uv.IO, b []byte) func() error {
		f, err := w.WriteAsync(b)
		uv.UvtMust(t, err)
		return func() error {
			ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
			defer cancel()
			_, err := event.AwaitValue(ctx, f)
			return err
		}
	}},
}

// tailOutcome is what a round saw (checkTail): the Write's n, whether the
// reader got p[:n] and then a prefix of the tail, and whether the bytes
// of p handed to the transport agree with n.
type tailOutcome struct {
	Reported int
	PrefixOK bool
	TailOK   bool
	HandedOK bool
}

// closeMidWriteTail parks a blocking Write of p on x.w, queues tail
// behind it with tw, lets the reader take extra bytes past what the kernel
// took at once, closes with x.close, and drains the reader: it must have
// got p[:n] then a prefix of tail. With drops (a close that reports them),
// the bytes read plus those reported dropped are every byte accepted.
func closeMidWriteTail(t *testing.T, u *uv.UvtReactor, x closedWriteEnd, tw tailWriter, p, tail []byte, extra int, drops0 int, withDrops bool) {
	t.Helper()
	done, q := parkWrite(t, x.w, p)
	await := tw.queue(t, u, x.w, tail)
	uv.UvtMust(t, x.rd.SetReadDeadline(time.Now().Add(uv.UvtSafety)))
	got := make([]byte, 0, len(p)+len(tail))
	if extra >= 0 {
		got = got[:min(len(p)-q+extra, len(p)+len(tail))]
		if _, err := io.ReadFull(x.rd, got); err != nil {
			t.Fatalf("reading %d bytes before the close: %v", len(got), err)
		}
	}
	uv.UvtMust(t, x.close())
	res := uv.UvtRecv(t, done, "the Write's return")
	if res.err != nil && !errors.Is(res.err, uv.ErrClosed) || res.err == nil && res.n != len(p) {
		t.Errorf("Write = %d, %v; want ErrClosed, or all %d bytes", res.n, res.err, len(p))
	}
	if await != nil {
		if err := await(); err != nil && !errors.Is(err, uv.ErrClosed) {
			t.Errorf("%s's request = %v, want ErrClosed or its bytes", tw.name, err)
		}
	}
	x.end()
	got = drainEnd(t, x.rd, got)
	checkTail(t, u, fmt.Sprintf("%s, extra %d, %d queued at the park", tw.name, extra, q), p, tail, got, res.n, drops0, withDrops)
}

// checkTail checks what a reader got after a close failed a Write of p
// that reported n, tail queued behind it: p[:n], then a prefix of tail;
// with drops reported (since the first drops0), the bytes of p handed to
// the transport (read plus dropped, less the tail, accepted whole) at
// least n, at most p (all of it when it fits the Write's window), and
// exactly n once a byte of the tail went out (the transport writes in
// order).
func checkTail(t *testing.T, u *uv.UvtReactor, what string, p, tail, got []byte, n, drops0 int, withDrops bool) {
	t.Helper()
	dropped := droppedSince(t, u, drops0)
	k := min(n, len(got))
	saw := tailOutcome{
		Reported: n,
		PrefixOK: n <= len(got) && bytes.Equal(got[:k], p[:k]),
		TailOK:   n <= len(got) && bytes.HasPrefix(tail, got[k:]),
		HandedOK: true,
	}
	if withDrops {
		h := len(got) + dropped - len(tail)
		saw.HandedOK = n <= h && h <= len(p) && (len(got) == n || h == n) && (len(p) > writeWindow || h == len(p))
	}
	want := tailOutcome{Reported: n, PrefixOK: true, TailOK: true, HandedOK: true}
	if diff := cmp.Diff(want, saw); diff != "" {
		t.Errorf("%s: read %d bytes, %d dropped (-want +got):\n%s", what, len(got), dropped, diff)
	}
}

// droppedSince sums the bytes of the drops reported after the first
// drops0, once the loop has made the reports of the closes asked so far.
func droppedSince(t *testing.T, u *uv.UvtReactor, drops0 int) int {
	t.Helper()
	uv.UvtMust(t, u.Call(func() {}))
	dropped := 0
	if ds := drops(u); len(ds) > drops0 {
		for _, d := range ds[drops0:] {
			dropped += d.Bytes
		}
	}
	return dropped
}

// readToEnd reads rd to the end of its stream.
func readToEnd(t *testing.T, rd closedWriteReader) []byte {
	t.Helper()
	uv.UvtMust(t, rd.SetReadDeadline(time.Now().Add(uv.UvtSafety)))
	got, err := io.ReadAll(rd)
	uv.UvtMust(t, err)
	return got
}

// writeWindow is the bytes of a blocking Write the transport holds at
// most (uv/io_write.go's): a longer p is handed in part when a close
// comes, the rest withdrawn.
const writeWindow = 1 << 20

// tailRounds runs rounds of closeMidWriteTail for each tail writer on each
// driver, over the ends open makes.
func tailRounds(t *testing.T, withDrops bool, open func(t *testing.T, u *uv.UvtReactor) closedWriteEnd) {
	tailRoundsOf(t, withDrops, closedWriteData, open)
}

// tailRoundsOf is tailRounds with data making round i's p.
func tailRoundsOf(t *testing.T, withDrops bool, data func(i int) []byte, open func(t *testing.T, u *uv.UvtReactor) closedWriteEnd) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		for _, tw := range tailWriters {
			for i := range 12 {
				x := open(t, u)
				tail := bytes.Repeat([]byte{0xfe}, 1000+i*4099)
				closeMidWriteTail(t, u, x, tw, data(i), tail, closedWriteExtras[i%len(closedWriteExtras)]+i, len(drops(u)), withDrops)
				x.done()
			}
		}
		stop()
		uv.UvtShutdown(t, u, withDrops)
	})
}

// TestUnixWriteAbortedTailReportsWritten: Abort of a Unix socket while a
// Write waits with a Send, a Write on the loop or a WriteAsync queued
// behind it: the peer gets exactly p[:n] and then a prefix of the tail,
// and what it got plus the drop reported is every byte accepted.
func TestUnixWriteAbortedTailReportsWritten(t *testing.T) {
	tailRounds(t, true, abortedUnixEnd)
}

// bigWriteData is round i's p past the Write's window (1 MiB): part of it
// is not handed to the transport when the close comes, and withdrawn.
func bigWriteData(i int) []byte {
	p := make([]byte, 1<<20+300<<10+i*37)
	for k := range p {
		p[k] = byte((k + i*7) % 251)
	}
	return p
}

// TestUnixWriteAbortedBigTailReportsWritten: TestUnixWriteAbortedTailReportsWritten
// with a Write past its window: the tail waits unhanded behind its rest
// when Abort comes.
func TestUnixWriteAbortedBigTailReportsWritten(t *testing.T) {
	tailRoundsOf(t, true, bigWriteData, func(t *testing.T, u *uv.UvtReactor) closedWriteEnd {
		x := abortedUnixEnd(t, u)
		uv.UvtMust(t, x.w.SetHighWaterMark(math.MaxInt)) // the tail goes behind all of p
		return x
	})
}

// TestTTYWriteClosedTailReportsWritten: a terminal's Close while a Write
// waits with writes queued behind it: the master gets exactly p[:n], then
// a prefix of the tail.
func TestTTYWriteClosedTailReportsWritten(t *testing.T) {
	tailRounds(t, true, closedTTYEnd)
}

// TestTCPWriteAbortedReportsKernelBytes: Abort of a TCP connection while
// a blocking Write waits. The reset drops the bytes the kernel still held
// with those the IO held: the peer reads a prefix of p[:n], never a byte
// past it, then ECONNRESET. n counts the bytes the kernel took (as
// net.TCPConn's Write does), not those the peer got: at least what the
// peer had read before the Abort. The drop is reported as a reset.
func TestTCPWriteAbortedReportsKernelBytes(t *testing.T) {
	lingerEachEnd(t, func(t *testing.T, v *lingerEnv) {
		if _, err := v.io.Write([]byte{1}); err != nil { // a lane, as a Write's first use makes
			t.Fatalf("first Write: %v", err)
		}
		one := make([]byte, 1)
		v.peer.SetReadDeadline(time.Now().Add(uv.UvtSafety))
		_, err := io.ReadFull(v.peer, one)
		uv.UvtMust(t, err)
		p := lingerData()
		done, _ := parkWrite(t, v.io, p)
		before := make([]byte, 100000)
		_, err = io.ReadFull(v.peer, before)
		uv.UvtMust(t, err)
		uv.UvtMust(t, v.io.Abort())
		res := uv.UvtRecv(t, done, "the Write's return")
		rest, err := io.ReadAll(v.peer)
		if !errors.Is(err, syscall.ECONNRESET) {
			t.Errorf("peer read %d bytes then %v, want ECONNRESET", len(before)+len(rest), err)
		}
		got := append(before, rest...)
		type outcome struct {
			ErrClosed               bool
			AtLeastRead, PrefixOfPN bool
		}
		want := outcome{true, true, true}
		saw := outcome{
			ErrClosed:   errors.Is(res.err, uv.ErrClosed),
			AtLeastRead: res.n >= len(before),
			PrefixOfPN:  len(got) <= res.n && bytes.Equal(got, p[:len(got)]),
		}
		if diff := cmp.Diff(want, saw); diff != "" {
			t.Errorf("Write = %d, %v; peer read %d (-want +got):\n%s", res.n, res.err, len(got), diff)
		}
		uv.UvtMust(t, v.u.Call(func() {}))
		checkDrop(t, v.u, uv.ErrAborted)
		v.stop()
		uv.UvtShutdown(t, v.u, true)
	})
}

// closeWhileReading is closeMidWriteTail with the reader reading all along,
// on a goroutine of its own, so that the loop is writing (a partial
// write(2), a completion on its way) when the close comes from the test's
// goroutine, once the reader has taken at least extra bytes.
func closeWhileReading(t *testing.T, u *uv.UvtReactor, x closedWriteEnd, p, tail []byte, extra int, drops0 int, withDrops bool) {
	t.Helper()
	done, _ := parkWrite(t, x.w, p)
	uv.UvtMust(t, x.w.Send(tail))
	uv.UvtMust(t, x.rd.SetReadDeadline(time.Now().Add(uv.UvtSafety)))
	var read atomic.Int64
	drained := make(chan []byte, 1)
	ended := make(chan struct{})
	go func() {
		var got []byte
		buf := make([]byte, 3000)
		for {
			k, err := x.rd.Read(buf)
			got = append(got, buf[:k]...)
			read.Store(int64(len(got)))
			if err != nil {
				if !errors.Is(err, io.EOF) && !errors.Is(err, syscall.EIO) {
					t.Errorf("reading after %d bytes: %v", len(got), err)
				}
				break
			}
		}
		<-ended
		drained <- got
	}()
	uv.UvtWaitFor(t, "the reader's first bytes", func() bool { return read.Load() >= int64(extra) })
	uv.UvtMust(t, x.close())
	res := uv.UvtRecv(t, done, "the Write's return")
	x.end()
	close(ended)
	got := uv.UvtRecv(t, drained, "the reader's end")
	checkTail(t, u, fmt.Sprintf("extra %d: Write = %d, %v", extra, res.n, res.err), p, tail, got, res.n, drops0, withDrops)
}

// TestWriteClosedWhileReadingReportsWritten: Abort of a Unix socket, its
// Close after SetLinger(0), and a terminal's Close, from the test's goroutine while the reader reads all
// along and the loop writes: the reader gets exactly p[:n], then a prefix
// of the Send queued behind the Write.
func TestWriteClosedWhileReadingReportsWritten(t *testing.T) {
	opens := map[string]func(t *testing.T, u *uv.UvtReactor) closedWriteEnd{
		"unix-abort": abortedUnixEnd,
		"unix-linger0": func(t *testing.T, u *uv.UvtReactor) closedWriteEnd {
			x := abortedUnixEnd(t, u)
			uv.UvtMust(t, x.w.SetLinger(0)) // Close is Abort
			x.close = x.w.Close
			return x
		},
		"tty": closedTTYEnd,
	}
	for _, name := range []string{"unix-abort", "unix-linger0", "tty"} {
		t.Run(name, func(t *testing.T) {
			uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
				stop := uv.UvtServe(t, u)
				for i := range 40 {
					x := opens[name](t, u)
					tail := bytes.Repeat([]byte{0xfe}, 5000+i*997)
					closeWhileReading(t, u, x, closedWriteData(i), tail, i*7919, len(drops(u)), true)
					x.done()
				}
				stop()
				uv.UvtShutdown(t, u, true)
			})
		})
	}
}

// TestUnixHeldWriteAbortedReportsWritten: Abort while a blocking Write's
// write lane write(2) went out in part (its rest not yet taken by the
// loop) and a Send waits behind it, on a dialed Unix socket (which has no
// reset): the Write returns the bytes the lane wrote and ErrClosed, the
// peer reads exactly those, then a prefix of the Send, then the end of
// the stream, and what it read plus the drop reported is every byte the
// Write reported and the Send took.
func TestUnixHeldWriteAbortedReportsWritten(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		c, peer := dialedUnix(t, u)
		if _, err := c.Write([]byte{1}); err != nil { // makes the lane
			t.Fatalf("first Write: %v", err)
		}
		big := lingerData()
		tail := bytes.Repeat([]byte{0xfe}, 300<<10)
		state, done := holdLaneThen(t, u, c, big, func() string {
			if err := c.Send(tail); err != nil {
				return "Send: " + err.Error()
			}
			if err := c.Abort(); err != nil {
				return "Abort: " + err.Error()
			}
			return ""
		})
		if state != "held" {
			c.Close()
			t.Fatalf("write lane %s, want a Write held in part with the peer not reading", state)
		}
		w := uv.UvtRecv(t, done, "the held Write's return at Abort")
		got := readToEnd(t, peer)
		dropped := droppedSince(t, u, 0)
		type outcome struct {
			ErrClosed, PrefixOK, TailOK bool
			Accounted                   int
		}
		n := min(1+w.n, len(got))
		want := outcome{true, true, true, 1 + w.n + len(tail)}
		saw := outcome{
			ErrClosed: errors.Is(w.err, uv.ErrClosed),
			PrefixOK:  1+w.n <= len(got) && bytes.Equal(got[:n], append([]byte{1}, big[:n-1]...)),
			TailOK:    1+w.n <= len(got) && bytes.HasPrefix(tail, got[n:]),
			Accounted: len(got) + dropped,
		}
		if diff := cmp.Diff(want, saw); diff != "" {
			t.Errorf("held Write = %d, %v; peer read %d, %d dropped (-want +got):\n%s", w.n, w.err, len(got), dropped, diff)
		}
		stop()
		uv.UvtShutdown(t, u, dropped > 0)
	})
}

// TestUnixWriteClosedThenAbortedAccounts: Close while a blocking Write
// waits lingers, so the Write returns every byte it handed over (they are
// to go out); an Abort after it cuts the lingering close short and drops
// what the IO still held of them. The Write cannot take its n back: the
// peer reads p[:k] for some k <= n, then the end of the stream, and the
// drop reported is exactly the rest, n - k, plus the tail queued behind
// the Write, so that read plus dropped is every byte accepted. The
// caller that retries p[n:] must add the drop's bytes (as a net.TCPConn's
// caller loses the kernel's after SetLinger(0)).
func TestUnixWriteClosedThenAbortedAccounts(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		x := abortedUnixEnd(t, u)
		p, tail := closedWriteData(3), bytes.Repeat([]byte{0xfe}, 70000)
		done, _ := parkWrite(t, x.w, p)
		uv.UvtMust(t, x.w.Send(tail))
		uv.UvtMust(t, x.w.Close())
		res := uv.UvtRecv(t, done, "the Write's return at Close")
		uv.UvtMust(t, x.w.Abort())
		got := readToEnd(t, x.rd)
		// The pure-Go driver's lingering close reports its drop on the
		// loop after it closed the socket: the peer can read the end
		// before the report is made.
		uv.UvtWaitFor(t, "the abort's drop report, or every byte read", func() bool {
			return len(drops(u)) > 0 || len(got) == len(p)+len(tail)
		})
		dropped := droppedSince(t, u, 0)
		type outcome struct {
			ErrClosed, AllHanded, PrefixOK bool
			Accounted                      int
		}
		k := min(len(got), len(p))
		want := outcome{true, true, true, len(p) + len(tail)}
		saw := outcome{
			ErrClosed: errors.Is(res.err, uv.ErrClosed),
			AllHanded: res.n == len(p),
			PrefixOK:  bytes.Equal(got[:k], p[:k]) && bytes.HasPrefix(tail, got[k:]),
			Accounted: len(got) + dropped,
		}
		if diff := cmp.Diff(want, saw); diff != "" {
			t.Errorf("Write = %d, %v; peer read %d, %d dropped (-want +got):\n%s", res.n, res.err, len(got), dropped, diff)
		}
		x.done()
		stop()
		uv.UvtShutdown(t, u, dropped > 0)
	})
}

// TestUnixWriteAbortedBehindTimedOutWrite: a Write whose deadline passed
// returns the bytes it handed over (they still go out, completing behind
// a stand-in); a second Write parks behind them, and Abort comes once the
// reader took extra bytes. The second Write reports exactly what the
// reader got of it (nothing unless all of the first's went out), and read
// plus dropped is every byte the two reported handed, on both drivers.
func TestUnixWriteAbortedBehindTimedOutWrite(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		for i := range 12 {
			x := abortedUnixEnd(t, u)
			drops0 := len(drops(u))
			p1, p2 := closedWriteData(i), bytes.Repeat([]byte{0xfe}, 200<<10+i*4099)
			done1, q := parkWrite(t, x.w, p1)
			uv.UvtMust(t, x.w.SetWriteDeadline(time.Unix(1, 0))) // passed: the Write returns
			w1 := uv.UvtRecv(t, done1, "the first Write's time-out")
			uv.UvtMust(t, x.w.SetWriteDeadline(time.Time{}))
			q1 := x.w.Queued() // the first's bytes still queued: the reader reads nothing yet
			done2, _ := parkWrite(t, x.w, p2)
			uv.UvtWaitFor(t, "the second Write queued", func() bool { return x.w.Queued() > q1 })
			got := make([]byte, min(len(p1)-q+closedWriteExtras[i%len(closedWriteExtras)]+i*9000, w1.n+len(p2)))
			uv.UvtMust(t, x.rd.SetReadDeadline(time.Now().Add(uv.UvtSafety)))
			_, err := io.ReadFull(x.rd, got)
			uv.UvtMust(t, err)
			uv.UvtMust(t, x.w.Abort())
			w2 := uv.UvtRecv(t, done2, "the second Write's return")
			got = append(got, readToEnd(t, x.rd)...)
			dropped := droppedSince(t, u, drops0)
			type outcome struct {
				TimedOut, Closed  bool
				Second, Accounted int
				Prefix            bool
			}
			k := min(len(got), w1.n)
			want := outcome{true, true, max(len(got)-w1.n, 0), w1.n + len(p2), true}
			saw := outcome{
				TimedOut:  errors.Is(w1.err, os.ErrDeadlineExceeded),
				Closed:    errors.Is(w2.err, uv.ErrClosed) || w2.err == nil && w2.n == len(p2),
				Second:    w2.n,
				Accounted: len(got) + dropped,
				Prefix:    bytes.Equal(got[:k], p1[:k]) && bytes.HasPrefix(p2, got[k:]),
			}
			if diff := cmp.Diff(want, saw); diff != "" {
				t.Errorf("round %d: first Write = %d, %v; second = %d, %v; read %d, %d dropped (-want +got):\n%s",
					i, w1.n, w1.err, w2.n, w2.err, len(got), dropped, diff)
			}
			x.done()
		}
		stop()
		uv.UvtShutdown(t, u, true)
	})
}
