package uv_test

import (
	"errors"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/uvevent/uvevent/uv"
)

// epipeSizes are the sizes of p TestWriteEPIPESizes writes: a byte, a
// page, the shrunk socket's buffers and a little more, two transport
// requests, and more than the Write's window (its rest not handed).
var epipeSizes = []int{1, 4096, 8192, 300 << 10, 1<<20 + 300<<10}

// epipePre are how many bytes the peer reads before it shuts its reading
// side down (capped at len(p)).
var epipePre = []int{0, 1, 4095, 70000, 600000}

// TestWriteEPIPESizes: a blocking Write that the peer's shutdown(2) of its
// reading side (SHUT_RD) ends with EPIPE reports as n exactly the bytes
// the peer reads (every byte the kernel took of p: a Unix socket loses
// none), which are p[:n]; one that goes out whole first reports len(p)
// and no error; and retrying p[n:] then fails, writing nothing (the peer
// reads no more). Over a socket pair (OpenPipe: no write lane) and a
// dialled Unix socket (the write lane: the caller's write(2) first), the
// sizes and the bytes read first varied, on both drivers.
func TestWriteEPIPESizes(t *testing.T) {
	for _, network := range []string{"pair", "unix", "tcp4"} {
		t.Run(network, func(t *testing.T) {
			uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
				stop := uv.UvtServe(t, u)
				for i, size := range epipeSizes {
					for j, pre := range epipePre {
						epipeRound(t, u, network, size, min(pre, size), i*len(epipePre)+j)
					}
				}
				stop()
				uv.UvtShutdown(t, u, false)
			})
		})
	}
}

// epipeRound is a round of TestWriteEPIPESizes.
func epipeRound(t *testing.T, u *uv.UvtReactor, network string, size, pre, round int) {
	t.Helper()
	w, peer := abortRaceOpen(t, u, network)
	if network != "pair" {
		if _, err := w.Write([]byte{0}); err != nil { // makes the lane
			t.Fatalf("first Write: %v", err)
		}
		one := make([]byte, 1)
		uv.UvtMust(t, peer.SetReadDeadline(time.Now().Add(uv.UvtSafety)))
		_, err := io.ReadFull(peer, one)
		uv.UvtMust(t, err)
		uv.UvtWaitFor(t, "the write lane open", func() bool { return uv.UvtLane(w) == "open" })
	}
	p := make([]byte, size)
	for k := range p {
		p[k] = byte((k + round*13) % 251)
	}
	done := make(chan heldWrite, 1)
	go func() {
		n, err := w.Write(p)
		done <- heldWrite{n, err}
	}()
	uv.UvtMust(t, peer.SetReadDeadline(time.Now().Add(uv.UvtSafety)))
	got := make([]byte, pre, size)
	_, err := io.ReadFull(peer, got)
	uv.UvtMust(t, err)
	if network == "tcp4" {
		epipeReset(t, w, peer, p, pre, done)
		return
	}
	uv.UvtMust(t, peer.(interface{ CloseRead() error }).CloseRead())
	got = drainEnd(t, peer, got)
	res := uv.UvtRecv(t, done, "the Write's return")
	retry := heldWrite{}
	if res.err != nil {
		retry.n, retry.err = w.Write(p[res.n:])
	}
	more := drainEnd(t, peer, nil)
	type outcome struct {
		Reported, Read int
		Prefix, Failed bool
		Retried, More  int
		RetryFailed    bool
	}
	want := outcome{Reported: len(got), Read: len(got), Prefix: true, Failed: len(got) < size, RetryFailed: len(got) < size}
	saw := outcome{
		Reported: res.n, Read: len(got), Prefix: string(got) == string(p[:len(got)]),
		Failed:  errors.Is(res.err, syscall.EPIPE) || errors.Is(res.err, syscall.ECONNRESET),
		Retried: retry.n, More: len(more), RetryFailed: retry.err != nil,
	}
	if res.err == nil {
		want.Failed, want.RetryFailed = false, false
	}
	if diff := cmp.Diff(want, saw); diff != "" {
		t.Errorf("size %d, %d read first: Write = %d, %v; retry = %d, %v (-want +got):\n%s", size, pre, res.n, res.err, retry.n, retry.err, diff)
	}
	w.Close()
}

// epipeReset ends a round of TestWriteEPIPESizes over TCP: the peer,
// having read pre bytes, resets the connection (SO_LINGER 0, then close).
// The Write then ends with a write error, or all of p written; its n is at
// least the bytes read, at most len(p) (the kernel took what it counts,
// and the reset dropped what the peer had not read), and retrying p[n:]
// fails, writing nothing.
func epipeReset(t *testing.T, w *uv.IO, peer net.Conn, p []byte, pre int, done <-chan heldWrite) {
	t.Helper()
	uv.UvtMust(t, peer.(*net.TCPConn).SetLinger(0))
	uv.UvtMust(t, peer.Close())
	res := uv.UvtRecv(t, done, "the Write's return")
	type outcome struct {
		InRange, Failed bool
		Retried         int
		RetryFailed     bool
	}
	want := outcome{InRange: true, Failed: true, RetryFailed: true}
	saw := outcome{InRange: res.n >= pre && res.n <= len(p), Failed: res.err != nil}
	if res.err != nil {
		saw.Failed = errors.Is(res.err, syscall.ECONNRESET) || errors.Is(res.err, syscall.EPIPE)
		n, err := w.Write(p[res.n:])
		saw.Retried, saw.RetryFailed = n, err != nil
	} else {
		want.Failed, want.RetryFailed = false, false
		saw.InRange = res.n == len(p)
	}
	if diff := cmp.Diff(want, saw); diff != "" {
		t.Errorf("size %d, %d read first, then a reset: Write = %d, %v (-want +got):\n%s", len(p), pre, res.n, res.err, diff)
	}
	w.Close()
}
