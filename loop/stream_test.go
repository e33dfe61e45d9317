package loop_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/loop"
)

// An echo over a socket pair: a 4 MiB write does not fit the socket, so the
// rest is buffered (Buffered shows it) and goes out as the peer reads; the
// peer reads in blocks of ReadSize; OnDrain tells when the buffer is empty;
// every byte comes back in order.
func TestStreamEchoBackpressure(t *testing.T) {
	eachDriver(t, func(t *testing.T, l *tloop) {
		fds := socketpair(t)
		var blocks []int
		_, err := l.NewStream(fds[0], loop.StreamOptions{
			OnData: func(s *loop.Stream, b []byte) {
				blocks = append(blocks, len(b))
				if _, err := s.Write(b); err != nil {
					t.Errorf("echo write: %v", err)
				}
			},
		})
		must(t, err)
		payload := make([]byte, 4<<20)
		for i := range payload {
			payload[i] = byte(i * 7 / 3)
		}
		var back bytes.Buffer
		drains := 0
		var client *loop.Stream
		client, err = l.NewStream(fds[1], loop.StreamOptions{
			OnData: func(s *loop.Stream, b []byte) {
				back.Write(b)
				if back.Len() == len(payload) {
					s.Close()
					l.OffReadable(fds[0])
					l.OffWritable(fds[0])
				}
			},
			OnDrain: func(*loop.Stream) { drains++ },
		})
		must(t, err)
		if n, err := client.Write(payload); n != len(payload) || err != nil {
			t.Fatalf("Write = %d, %v; want %d, nil", n, err, len(payload))
		}
		if b := client.Buffered(); b == 0 || b >= len(payload) {
			t.Fatalf("Buffered after a 4 MiB write = %d, want some but not all (the socket took a part)", b)
		}
		run(t, l)
		if !bytes.Equal(back.Bytes(), payload) {
			t.Fatalf("echoed %d bytes, not the %d sent (or not in order)", back.Len(), len(payload))
		}
		if drains < 1 {
			t.Error("OnDrain never called")
		}
		if len(blocks) == 0 || blocks[0] != loop.DefaultReadSize {
			t.Errorf("first read = %v, want a full block of %d (the socket held more)", blocks[:min(1, len(blocks))], loop.DefaultReadSize)
		}
		if _, err := client.Write([]byte("late")); !errors.Is(err, event.ErrClosed) {
			t.Errorf("Write after Close = %v, want ErrClosed", err)
		}
	})
}

// The peer's end of stream closes the stream with io.EOF; a write to a
// peer that is gone fails with EPIPE and closes the stream with it.
func TestStreamEOFAndWriteError(t *testing.T) {
	eachDriver(t, func(t *testing.T, l *tloop) {
		fds := socketpair(t)
		var reasons []error
		onClose := func(_ *loop.Stream, err error) { reasons = append(reasons, err) }
		_, err := l.NewStream(fds[0], loop.StreamOptions{OnData: func(*loop.Stream, []byte) {}, OnClose: onClose})
		must(t, err)
		unix.Shutdown(fds[1], unix.SHUT_WR)
		run(t, l)
		if len(reasons) != 1 || !errors.Is(reasons[0], io.EOF) {
			t.Fatalf("close reasons = %v, want [EOF]", reasons)
		}

		other, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
		must(t, err)
		s, err := l.NewStream(other[0], loop.StreamOptions{OnClose: onClose, CloseFD: true})
		must(t, err)
		unix.Close(other[1])
		if _, err := s.Write([]byte("into the void")); !errors.Is(err, syscall.EPIPE) {
			t.Errorf("Write to a closed peer = %v, want EPIPE", err)
		}
		if len(reasons) != 2 || !errors.Is(reasons[1], syscall.EPIPE) {
			t.Errorf("close reasons = %v, want [EOF EPIPE]", reasons)
		}
		if _, err := unix.FcntlInt(uintptr(other[0]), unix.F_GETFD, 0); !errors.Is(err, syscall.EBADF) {
			t.Errorf("descriptor of a CloseFD stream after close: %v, want EBADF", err)
		}
		if err := s.Close(); err != nil {
			t.Errorf("second Close = %v, want nil", err)
		}
	})
}

// A bad descriptor is refused.
func TestStreamBadInput(t *testing.T) {
	eachDriver(t, func(t *testing.T, l *tloop) {
		if _, err := l.NewStream(-1, loop.StreamOptions{}); !errors.Is(err, syscall.EBADF) {
			t.Errorf("NewStream(-1) = %v, want EBADF", err)
		}
	})
}

// Writes from many goroutines while the loop serves: every byte arrives,
// each write's bytes together (Write is atomic with respect to other
// Writes).
func TestStreamWritersRace(t *testing.T) {
	eachDriver(t, func(t *testing.T, l *tloop) {
		fds := socketpair(t)
		const writers, chunk = 8, 32 << 10
		var got bytes.Buffer
		done := make(chan struct{})
		_, err := l.NewStream(fds[0], loop.StreamOptions{OnData: func(s *loop.Stream, b []byte) {
			got.Write(b)
			if got.Len() == writers*chunk {
				l.OffReadable(fds[0])
				close(done)
			}
		}})
		must(t, err)
		w, err := l.NewStream(fds[1], loop.StreamOptions{})
		must(t, err)
		served := make(chan error, 1)
		go func() { served <- l.Reactor().Serve(context.Background()) }()
		var wg sync.WaitGroup
		for g := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := w.Write(bytes.Repeat([]byte{byte('a' + g)}, chunk)); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		select {
		case <-done:
		case <-time.After(safety):
			t.Fatal("not every byte arrived")
		}
		l.Stop()
		must(t, <-served)
		w.Close()
		counts := map[byte]int{}
		for _, c := range got.Bytes() {
			counts[c]++
		}
		for g := range writers {
			if n := counts[byte('a'+g)]; n != chunk {
				t.Errorf("writer %d: %d bytes arrived, want %d", g, n, chunk)
			}
		}
	})
}

// A stream closed after its loop: OnClose is still told, once.
func TestStreamCloseAfterLoop(t *testing.T) {
	eachDriver(t, func(t *testing.T, l *tloop) {
		fds := socketpair(t)
		var reasons []error
		s, err := l.NewStream(fds[0], loop.StreamOptions{
			OnData:  func(*loop.Stream, []byte) {},
			OnClose: func(_ *loop.Stream, err error) { reasons = append(reasons, err) },
		})
		must(t, err)
		must(t, l.Close())
		must(t, s.Close())
		must(t, s.Close())
		if len(reasons) != 1 || reasons[0] != nil {
			t.Errorf("OnClose calls %v, want one with nil", reasons)
		}
	})
}
