package uv_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/uvevent/uvevent/uv"
)

// abortPeer opens a connection of network ("tcp4" or "unix") as an IO
// that has a write lane (dialled; "tcp4-accepted": accepted by a
// uv.Listener, which on the libuv driver leaves it unopened in libuv while
// its lanes serve it), its other end a net.Conn outside the reactor.
func abortPeer(t *testing.T, u *uv.UvtReactor, network string) (*uv.IO, net.Conn) {
	t.Helper()
	switch network {
	case "unix":
		return dialedUnix(t, u)
	case "tcp4-accepted":
		return acceptedPeer(t, u)
	}
	return dialedPeer(t, u, network, "127.0.0.1:0")
}

// acceptedPeer is a TCP connection a uv.Listener accepted, and its
// dialling end, closed at cleanup.
func acceptedPeer(t *testing.T, u *uv.UvtReactor) (*uv.IO, net.Conn) {
	t.Helper()
	ln, err := uv.Listen(u.Reactor, "tcp4", "127.0.0.1:0")
	uv.UvtMust(t, err)
	defer ln.Close()
	peer, err := net.Dial("tcp4", ln.Addr().String())
	uv.UvtMust(t, err)
	t.Cleanup(func() { peer.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
	defer cancel()
	c, err := ln.AcceptIO(ctx)
	uv.UvtMust(t, err)
	return c, peer
}

// readToStreamEnd reads rd to the end of its stream (its end, or a
// reset) and returns what it got.
func readToStreamEnd(t *testing.T, rd net.Conn) []byte {
	t.Helper()
	uv.UvtMust(t, rd.SetReadDeadline(time.Now().Add(uv.UvtSafety)))
	var got []byte
	buf := make([]byte, 64<<10)
	for {
		k, err := rd.Read(buf)
		got = append(got, buf[:k]...)
		if errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) {
			return got
		}
		if err != nil {
			t.Fatalf("reading the peer after %d bytes: %v", len(got), err)
		}
	}
}

// abortCloses are the closes that reset at once: Abort, and Close after
// SetLinger(0).
var abortCloses = []struct {
	name  string
	close func(w *uv.IO) error
}{
	{"abort", (*uv.IO).Abort},
	{"setlinger0", func(w *uv.IO) error {
		if err := w.SetLinger(0); err != nil {
			return err
		}
		return w.Close()
	}},
}

// TestAbortDropsWritesNotHanded: Abort (or Close after SetLinger(0))
// drops at once what the IO holds; the writes it had not handed to the
// socket yet are not written first. A caller's Write holds the write lane
// (it went out in part through the lane, its rest due on the loop, which
// takes it ahead of the writes queued meanwhile: uv/io_lane.go), so the
// Sends and WriteAsyncs queued behind it wait in the IO, the socket's
// buffers empty. Abort then: the peer, which the socket had room for,
// reads no byte of them (the end of the stream, or the reset), and the
// drop report counts every one of them, on both drivers, over a Unix
// socket and TCP, dialled and accepted.
func TestAbortDropsWritesNotHanded(t *testing.T) {
	for _, network := range []string{"unix", "tcp4", "tcp4-accepted"} {
		t.Run(network, func(t *testing.T) {
			uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
				stop := uv.UvtServe(t, u)
				for _, tw := range tailWriters {
					for _, c := range abortCloses {
						abortHeldRound(t, u, network, tw, c.close, tw.name+", "+c.name)
					}
				}
				stop()
				uv.UvtShutdown(t, u, true)
			})
		})
	}
}

// abortHeldRound is a round of TestAbortDropsWritesNotHanded: a new
// connection of network, its lane held, three writes queued with tw, then
// closed with abort, the peer drained and the drop report checked.
func abortHeldRound(t *testing.T, u *uv.UvtReactor, network string, tw tailWriter, abort func(*uv.IO) error, what string) {
	t.Helper()
	w, peer := abortPeer(t, u, network)
	drops0 := len(drops(u))
	if _, err := w.Write([]byte{0xaa}); err != nil { // makes the lane
		t.Fatalf("first Write: %v", err)
	}
	one := make([]byte, 1)
	uv.UvtMust(t, peer.SetReadDeadline(time.Now().Add(uv.UvtSafety)))
	_, err := io.ReadFull(peer, one)
	uv.UvtMust(t, err)
	uv.UvtWaitFor(t, "the write lane open", func() bool { return uv.UvtLane(w) == "open" })
	if !uv.UvtTakeLane(w) {
		t.Fatalf("write lane %s, want it taken as a caller's write takes it", uv.UvtLane(w))
	}
	uv.UvtEndLaneWrite(w, "held") // the caller's write went out in part
	var tails []byte
	var awaits []func() error
	for i := range 3 {
		b := bytes.Repeat([]byte{byte(0xf0 + i)}, 1000+i*333)
		tails = append(tails, b...)
		if a := tw.queue(t, u, w, b); a != nil {
			awaits = append(awaits, a)
		}
	}
	q := w.Queued()
	uv.UvtMust(t, abort(w))
	for _, a := range awaits {
		if err := a(); !errors.Is(err, uv.ErrClosed) {
			t.Errorf("%s: request = %v, want ErrClosed", what, err)
		}
	}
	got := readToStreamEnd(t, peer)
	dropped := droppedSince(t, u, drops0)
	ds := drops(u)[drops0:]
	type outcome struct {
		Queued, Read, Reports, Dropped int
		Reset, Aborted                 bool
	}
	want := outcome{Queued: len(tails), Reports: 1, Dropped: len(tails), Reset: network != "unix", Aborted: true}
	saw := outcome{Queued: q, Read: len(got), Reports: len(ds), Dropped: dropped}
	for _, d := range ds {
		saw.Reset = d.Reset
		saw.Aborted = errors.Is(d, uv.ErrAborted)
	}
	if diff := cmp.Diff(want, saw); diff != "" {
		t.Errorf("%s: reset with writes queued behind a held lane (-want +got):\n%s", what, diff)
	}
}
