package uv_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/uv"
)

// These tests close an IO while a blocking Write is parked on it, the
// transport holding part of p, and check that the Write reports exactly
// the bytes that reached the other end: a caller retrying p[n:] after
// ErrClosed must send no byte twice, and lose none (io.Writer's n is what
// was written). The reader takes some bytes first, more than the kernel
// took at once, so that the transport has written part of the request it
// holds when the close comes (libuv's uv_write advances a request in
// place; the pure-Go driver's queue likewise): the iterations vary how far.

// closedWriteExtras are how many bytes past what the kernel took at once
// the reader takes before the close (-1: none at all); each iteration
// adds its number, so the partial states differ. 300 000 crosses the
// first 256 KiB request.
var closedWriteExtras = []int{-1, 1, 1000, 4096, 70000, 300000}

// closedWriteRounds is how many Writes each test closes mid-flight.
const closedWriteRounds = 30

// closedWriteData is round i's p: 300 KiB and some (more than the kernel's
// buffers take, in two transport requests), a pattern of its own.
func closedWriteData(i int) []byte {
	p := make([]byte, 300<<10+i*37)
	for k := range p {
		p[k] = byte((k + i*7) % 251)
	}
	return p
}

// closedWriteOutcome is what a round saw: the n the Write reported, the
// bytes the reader got, and whether they are the start of p.
type closedWriteOutcome struct {
	Reported, Read int
	Prefix         bool
}

// closedWriteReader is the other end of the IO a test closes: a pipe's
// read end, a terminal's master, a socket's peer.
type closedWriteReader interface {
	io.Reader
	SetReadDeadline(time.Time) error
}

// closeMidWriteBy runs one blocking Write of p on w, whose other end rd
// reads nothing until the Write is parked; then rd takes extra bytes past
// what the kernel took at once (none when extra < 0), close closes w
// (Close, or Abort), end closes whatever else holds the writing side open,
// and rd is drained to its end (EOF, or EIO for a terminal's master): what
// it got must be p[:n] for the n the Write reported.
func closeMidWriteBy(t *testing.T, w *uv.IO, close func() error, rd closedWriteReader, p []byte, extra int, end func()) {
	t.Helper()
	done, q := parkWrite(t, w, p)
	uv.UvtMust(t, rd.SetReadDeadline(time.Now().Add(uv.UvtSafety)))
	got := make([]byte, 0, len(p))
	if extra >= 0 {
		got = got[:min(len(p)-q+extra, len(p))]
		if _, err := io.ReadFull(rd, got); err != nil {
			t.Fatalf("reading %d bytes before the close: %v", len(got), err)
		}
	}
	uv.UvtMust(t, close())
	res := uv.UvtRecv(t, done, "the Write's return")
	if res.err != nil && !errors.Is(res.err, uv.ErrClosed) || res.err == nil && res.n != len(p) {
		t.Errorf("Write = %d, %v; want ErrClosed, or all %d bytes", res.n, res.err, len(p))
	}
	end()
	got = drainEnd(t, rd, got)
	want := closedWriteOutcome{Reported: res.n, Read: res.n, Prefix: true}
	saw := closedWriteOutcome{Reported: res.n, Read: len(got), Prefix: bytes.HasPrefix(p, got)}
	if diff := cmp.Diff(want, saw); diff != "" {
		t.Errorf("extra %d, %d bytes queued at the park: the reader got other than the Write reported (-want +got):\n%s", extra, q, diff)
	}
}

// drainEnd reads rd to its end (EOF, or EIO for a terminal's master once
// every descriptor of its terminal side is closed), after got, and
// returns all it read.
func drainEnd(t *testing.T, rd closedWriteReader, got []byte) []byte {
	t.Helper()
	buf := make([]byte, 64<<10)
	for {
		k, err := rd.Read(buf)
		got = append(got, buf[:k]...)
		if errors.Is(err, io.EOF) || errors.Is(err, syscall.EIO) {
			return got
		}
		if err != nil {
			t.Fatalf("draining the reader after %d bytes: %v", len(got), err)
		}
	}
}

// parkWrite starts a blocking Write of p on w, on a goroutine of its own,
// and returns once it is parked with bytes queued (the bytes the IO holds
// then, q): its outcome comes on done.
func parkWrite(t *testing.T, w *uv.IO, p []byte) (done <-chan heldWrite, q int) {
	t.Helper()
	ch := make(chan heldWrite, 1)
	go func() {
		n, err := w.Write(p)
		ch <- heldWrite{n, err}
	}()
	uv.UvtWaitFor(t, "the Write parked with bytes queued", func() bool { q = w.Queued(); return q > 0 })
	return ch, q
}

// closedWriteEnd is one round's IO and its other end, as a test opens
// them: close closes the IO (Close, or Abort), end closes whatever else
// holds the writing side open once the IO is closed, done closes the rest.
type closedWriteEnd struct {
	w         *uv.IO
	rd        closedWriteReader
	close     func() error
	end, done func()
}

// closeMidWriteRounds runs closedWriteRounds rounds of closeMidWriteBy on
// each driver, over the ends open makes for each; reportsExpected: the
// closes report drops.
func closeMidWriteRounds(t *testing.T, reportsExpected bool, open func(t *testing.T, u *uv.UvtReactor) closedWriteEnd) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		for i := range closedWriteRounds {
			x := open(t, u)
			closeMidWriteBy(t, x.w, x.close, x.rd, closedWriteData(i), closedWriteExtras[i%len(closedWriteExtras)]+i, x.end)
			x.done()
		}
		stop()
		uv.UvtShutdown(t, u, reportsExpected)
	})
}

// TestPipeWriteClosedReportsWritten: an IO over a pipe(2)'s write end
// (OpenPipe), its buffer shrunk to a page, closed while a Write waits;
// the reader gets exactly the n the Write reported, on both drivers.
func TestPipeWriteClosedReportsWritten(t *testing.T) {
	closeMidWriteRounds(t, false, func(t *testing.T, u *uv.UvtReactor) closedWriteEnd {
		var fds [2]int
		uv.UvtMust(t, unix.Pipe2(fds[:], unix.O_CLOEXEC|unix.O_NONBLOCK))
		rd := os.NewFile(uintptr(fds[0]), "pipe-r")
		if _, err := unix.FcntlInt(uintptr(fds[1]), unix.F_SETPIPE_SZ, os.Getpagesize()); err != nil {
			t.Logf("F_SETPIPE_SZ: %v (the default buffer then)", err)
		}
		w, err := uv.OpenPipe(u.Reactor, fds[1])
		if err != nil {
			unix.Close(fds[1])
			rd.Close()
			t.Fatalf("OpenPipe: %v", err)
		}
		return closedWriteEnd{w: w, rd: rd, close: w.Close, end: func() {}, done: func() { rd.Close() }}
	})
}

// TestTTYWriteClosedReportsWritten: an IO over a pseudo-terminal
// (OpenTTY), its output not processed (no OPOST: every byte goes through
// as written), closed while a Write waits for the master to read; the
// master gets exactly the n the Write reported, on both drivers. A
// terminal's close does not linger: what libuv's request (or the pure-Go
// driver's queue) had not written when the close came is dropped, so the
// Write must report the bytes written so far, not those handed over.
func TestTTYWriteClosedReportsWritten(t *testing.T) {
	closeMidWriteRounds(t, true, closedTTYEnd) // the close reports what it dropped (TestTTYCloseReportsDroppedSends)
}

// closedTTYEnd opens a pseudo-terminal, its output not processed (no
// OPOST: every byte goes through as written), as an IO (OpenTTY) that a
// test closes, the master its reader.
func closedTTYEnd(t *testing.T, u *uv.UvtReactor) closedWriteEnd {
	ptm, pts := openPTY(t)
	tio, err := ptyTermios(int(pts.Fd()))
	uv.UvtMust(t, err)
	tio.Oflag &^= unix.OPOST
	uv.UvtMust(t, unix.IoctlSetTermios(int(pts.Fd()), unix.TCSETS, tio))
	w, err := uv.OpenTTY(u.Reactor, int(pts.Fd()))
	uv.UvtMust(t, err)
	// The master reads EIO once every descriptor of the terminal side
	// is closed: the IO's (its own, reopened) and pts.
	return closedWriteEnd{w: w, rd: ptm, close: w.Close, end: func() { pts.Close() }, done: func() { ptm.Close() }}
}

// TestUnixWriteAbortedReportsWritten: Abort (a close that does not
// linger: what the IO holds is dropped at once) of a Unix socket while a
// Write waits. A Unix socket has no reset, so its peer reads the end of
// the stream after the bytes that reached the kernel: they must be exactly
// the n the Write reported, or a peer taking the clean end for the whole
// would miss bytes the writer was told went out. Both drivers; the
// socket's buffers shrunk so that most of p waits in the IO.
func TestUnixWriteAbortedReportsWritten(t *testing.T) {
	closeMidWriteRounds(t, true, abortedUnixEnd)
}

// abortedUnixEnd opens a Unix socket pair, its buffers shrunk so that most
// of a Write waits in the IO, as an IO (OpenPipe) that a test aborts, the
// other end its reader.
func abortedUnixEnd(t *testing.T, u *uv.UvtReactor) closedWriteEnd {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	uv.UvtMust(t, err)
	uv.UvtMust(t, unix.SetsockoptInt(fds[0], unix.SOL_SOCKET, unix.SO_SNDBUF, 4096))
	uv.UvtMust(t, unix.SetsockoptInt(fds[1], unix.SOL_SOCKET, unix.SO_RCVBUF, 4096))
	w, peer := unixPairOf(t, u, fds)
	return closedWriteEnd{w: w, rd: peer, close: w.Abort, end: func() {}, done: func() { peer.Close() }}
}

// TestTTYCloseReportsDroppedSends: a terminal's close does not linger, so
// the bytes the IO accepted and had not written when it closed are
// dropped; the close says so, as a reset does (a *DropError matching
// ErrDropped and, as its cause, ErrClosed, with no reset), rather than
// dropping them without a word: a Send, unlike a blocking Write, has no
// caller left to tell. The drop counts exactly the bytes the master did
// not get, on both drivers.
func TestTTYCloseReportsDroppedSends(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		x := closedTTYEnd(t, u)
		p := closedWriteData(7)
		uv.UvtMust(t, x.w.SetHighWaterMark(2*len(p)))
		uv.UvtMust(t, x.w.Send(p))
		uv.UvtWaitFor(t, "the Send queued in the IO", func() bool { return x.w.Queued() > 0 })
		uv.UvtMust(t, x.w.Close())
		x.end()
		uv.UvtMust(t, x.rd.SetReadDeadline(time.Now().Add(uv.UvtSafety)))
		got := drainEnd(t, x.rd, nil)
		x.done()
		uv.UvtWaitFor(t, "a drop report", func() bool { return len(drops(u)) > 0 })
		type outcome struct {
			Prefix, Reset, Dropped, Closed bool
			Bytes                          int
		}
		want := outcome{Prefix: true, Dropped: true, Closed: true, Bytes: len(p) - len(got)}
		var saw []outcome
		for _, d := range drops(u) {
			saw = append(saw, outcome{bytes.HasPrefix(p, got), d.Reset, errors.Is(d, uv.ErrDropped), errors.Is(d, uv.ErrClosed), d.Bytes})
		}
		if diff := cmp.Diff([]outcome{want}, saw); diff != "" {
			t.Errorf("the master got %d of %d bytes; drop reports (-want +got):\n%s", len(got), len(p), diff)
		}
		stop()
		uv.UvtShutdown(t, u, true)
	})
}
