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

// closeMidWrite runs one blocking Write of p on w, whose other end rd
// reads nothing until the Write is parked; then rd takes extra bytes past
// what the kernel took at once (none when extra < 0), w closes, end
// closes whatever else holds the writing side open, and rd is drained to
// its end (EOF, or EIO for a terminal's master): what it got must be
// p[:n] for the n the Write reported.
func closeMidWrite(t *testing.T, w *uv.IO, rd *os.File, p []byte, extra int, end func()) {
	t.Helper()
	type result struct {
		n   int
		err error
	}
	done := make(chan result, 1)
	go func() {
		n, err := w.Write(p)
		done <- result{n, err}
	}()
	var q int
	uv.UvtWaitFor(t, "the Write parked with bytes queued", func() bool { q = w.Queued(); return q > 0 })
	uv.UvtMust(t, rd.SetReadDeadline(time.Now().Add(uv.UvtSafety)))
	got := make([]byte, 0, len(p))
	if extra >= 0 {
		got = got[:min(len(p)-q+extra, len(p))]
		if _, err := io.ReadFull(rd, got); err != nil {
			t.Fatalf("reading %d bytes before the close: %v", len(got), err)
		}
	}
	uv.UvtMust(t, w.Close())
	res := uv.UvtRecv(t, done, "the Write's return")
	if res.err != nil && !errors.Is(res.err, uv.ErrClosed) || res.err == nil && res.n != len(p) {
		t.Errorf("Write = %d, %v; want ErrClosed, or all %d bytes", res.n, res.err, len(p))
	}
	end()
	buf := make([]byte, 64<<10)
	for {
		k, err := rd.Read(buf)
		got = append(got, buf[:k]...)
		if errors.Is(err, io.EOF) || errors.Is(err, syscall.EIO) {
			break
		}
		if err != nil {
			t.Fatalf("draining the reader after %d bytes: %v", len(got), err)
		}
	}
	want := closedWriteOutcome{Reported: res.n, Read: res.n, Prefix: true}
	saw := closedWriteOutcome{Reported: res.n, Read: len(got), Prefix: bytes.HasPrefix(p, got)}
	if diff := cmp.Diff(want, saw); diff != "" {
		t.Errorf("extra %d, %d bytes queued at the park: the reader got other than the Write reported (-want +got):\n%s", extra, q, diff)
	}
}

// TestPipeWriteClosedReportsWritten: an IO over a pipe(2)'s write end
// (OpenPipe), its buffer shrunk to a page, closed while a Write waits;
// the reader gets exactly the n the Write reported, on both drivers.
func TestPipeWriteClosedReportsWritten(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		for i := range closedWriteRounds {
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
			closeMidWrite(t, w, rd, closedWriteData(i), closedWriteExtras[i%len(closedWriteExtras)]+i, func() {})
			rd.Close()
		}
		stop()
		uv.UvtShutdown(t, u, false)
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
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		for i := range closedWriteRounds {
			ptm, pts := openPTY(t)
			tio, err := ptyTermios(int(pts.Fd()))
			uv.UvtMust(t, err)
			tio.Oflag &^= unix.OPOST
			uv.UvtMust(t, unix.IoctlSetTermios(int(pts.Fd()), unix.TCSETS, tio))
			w, err := uv.OpenTTY(u.Reactor, int(pts.Fd()))
			uv.UvtMust(t, err)
			// The master reads EIO once every descriptor of the terminal
			// side is closed: the IO's (its own, reopened) and pts.
			closeMidWrite(t, w, ptm, closedWriteData(i), closedWriteExtras[i%len(closedWriteExtras)]+i, func() { pts.Close() })
			ptm.Close()
		}
		stop()
		uv.UvtShutdown(t, u, false)
	})
}
