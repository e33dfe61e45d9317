package uv_test

import (
	"bytes"
	"context"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/uv"
)

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
		sp, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
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
