package loop_test

import (
	"errors"
	"os"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/loop"
	"github.com/uvevent/uvevent/reactor"
)

// fdOpen reports whether fd is an open descriptor.
func fdOpen(fd int) bool {
	_, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
	return err == nil
}

// openFDs counts the process's open descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("cannot count descriptors: %v", err)
	}
	return len(ents)
}

// The loop's Close closes its streams: each hears OnClose (nil, as for a
// Close), and a CloseFD stream's descriptor is closed; a stream that does
// not own its descriptor leaves it open. Both when the loop owns its
// reactor and when it does not.
func TestLoopCloseClosesStreams(t *testing.T) {
	for _, own := range []bool{true, false} {
		name := map[bool]string{true: "own reactor", false: "given reactor"}[own]
		t.Run(name, func(t *testing.T) {
			for _, d := range drivers {
				t.Run(d.String(), func(t *testing.T) {
					var l *loop.Loop
					if own {
						l = newLoop(t, d).Loop
					} else {
						r, err := reactor.New(reactor.Options{Driver: d})
						if errors.Is(err, reactor.ErrNoLibuv) {
							t.Skipf("the %v driver is not in this build: %v", d, err)
						}
						must(t, err)
						defer r.Close()
						l, err = loop.New(loop.Options{Reactor: r})
						must(t, err)
					}
					owned, peer := socketpair(t), socketpair(t)
					var closed []string
					onClose := func(name string) func(*loop.Stream, error) {
						return func(_ *loop.Stream, err error) {
							if err != nil {
								t.Errorf("%s: OnClose(%v), want nil", name, err)
							}
							closed = append(closed, name)
						}
					}
					_, err := l.NewStream(owned[0], loop.StreamOptions{CloseFD: true, OnData: func(*loop.Stream, []byte) {},
						OnClose: onClose("reading, CloseFD")})
					must(t, err)
					_, err = l.NewStream(peer[0], loop.StreamOptions{OnClose: onClose("writing")})
					must(t, err)
					must(t, l.Close())
					if diff := cmp.Diff([]string{"reading, CloseFD", "writing"}, closed, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
						t.Errorf("OnClose calls at the loop's Close (-want +got):\n%s", diff)
					}
					if fdOpen(owned[0]) {
						t.Errorf("a CloseFD stream's descriptor is open after the loop's Close")
					}
					if !fdOpen(peer[0]) {
						t.Errorf("a stream's descriptor it does not own was closed by the loop's Close")
					}
				})
			}
		})
	}
}

// A Stream dropped without Close, neither reading nor with writes
// waiting, is collected and closes the descriptor it owns (CloseFD).
func TestStreamDroppedClosesItsDescriptor(t *testing.T) {
	eachDriver(t, func(t *testing.T, l *tloop) {
		const n = 20
		before := openFDs(t)
		for range n {
			fds, err := unixSocketpair()
			must(t, err)
			unix.Close(fds[1])
			_, err = l.NewStream(fds[0], loop.StreamOptions{CloseFD: true})
			must(t, err)
		}
		if got := openFDs(t); got < before+n {
			t.Fatalf("%d descriptors with %d streams, want at least %d", got, n, before+n)
		}
		deadline := time.Now().Add(safety)
		for openFDs(t) > before {
			if time.Now().After(deadline) {
				t.Fatalf("%d descriptors open after dropping %d streams, want %d", openFDs(t), n, before)
			}
			runtime.GC()
			time.Sleep(time.Millisecond)
		}
	})
}

// A ReadSize that cannot be meant (1 TiB, allocated up front) is refused
// with EINVAL instead of ending the process out of memory.
func TestStreamReadSizeBounded(t *testing.T) {
	eachDriver(t, func(t *testing.T, l *tloop) {
		fds := socketpair(t)
		_, err := l.NewStream(fds[0], loop.StreamOptions{ReadSize: 1 << 40, OnData: func(*loop.Stream, []byte) {}})
		if !errors.Is(err, syscall.EINVAL) {
			t.Errorf("NewStream with ReadSize 1<<40 = %v, want EINVAL", err)
		}
		s, err := l.NewStream(fds[0], loop.StreamOptions{ReadSize: loop.MaxReadSize, OnData: func(*loop.Stream, []byte) {}})
		must(t, err)
		must(t, s.Close())
	})
}
