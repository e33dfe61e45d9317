package uv_test

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"sync"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/eventkind"
	"github.com/uvevent/uvevent/uv"
)

// socketpair returns a connected pair of stream sockets, closed at the end
// of the test unless the test closed them itself.
func socketpair(t testing.TB) (a, b int) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("socketpair: %v", err)
	}
	t.Cleanup(func() { unix.Close(fds[0]); unix.Close(fds[1]) })
	return fds[0], fds[1]
}

func fdOpen(fd int) bool {
	_, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
	return err == nil
}

func newPoll(t testing.TB, u *uv.UvtReactor, fd int, events uv.PollEvents, opts uv.PollOptions) *uv.Poll {
	t.Helper()
	p, err := uv.NewPoll(u.Reactor, fd, events, opts)
	if err != nil {
		t.Fatalf("NewPoll: %v", err)
	}
	return p
}

// closeAndFinish closes the events and shuts the reactor down once libuv
// freed every handle.
func closeAndFinish(t testing.TB, u *uv.UvtReactor, evs ...event.Event) {
	t.Helper()
	for _, ev := range evs {
		UvtMustClose(t, ev)
	}
	uv.UvtTurnUntil(t, u, "the close callbacks", func() bool { return u.Stats().CHandles == 0 && uv.UvtPolls(u) == 0 })
	uv.UvtShutdown(t, u, false)
}

func UvtMustClose(t testing.TB, ev event.Event) {
	t.Helper()
	if err := ev.Close(); err != nil {
		t.Fatalf("Close %s: %v", ev.Info(), err)
	}
}

// Create, start, fire, stop, restart, close: a readable socket notifies a
// started poll with Readable, a stopped one not at all.
func TestPollLifecycle(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		a, b := socketpair(t)
		p := newPoll(t, u, a, uv.Readable, uv.PollOptions{})
		if got, want := p.Info(), "Poll(fd="+itoa(a)+", events=r)"; got != want {
			t.Errorf("Info = %q, want %q", got, want)
		}
		if n := uv.UvtPolls(u); n != 1 {
			t.Fatalf("after NewPoll: %d polls, want 1", n)
		}
		calls := uv.UvtSubscribe(t, p, u.Owner().Owned)
		if err := p.Replay(event.NewCallback(func(event.Event, any, error) {})); !errors.Is(err, event.ErrNotReplayable) {
			t.Errorf("Replay = %v, want ErrNotReplayable (a poll stores no result)", err)
		}
		uv.UvtMust(t, p.Start())
		unix.Write(b, []byte("x"))
		uv.UvtTurnUntil(t, u, "readable", func() bool { return calls.N() > 0 })
		want := uv.UvtCall{Event: event.Deref(p), Result: uv.Readable, OnLoop: true}
		if diff := cmp.Diff(want, calls.Calls()[0], eqEvent, cmpopts.EquateErrors()); diff != "" {
			t.Errorf("notification (-want +got):\n%s", diff)
		}
		// Stopped: the data still waits, nothing is delivered.
		uv.UvtMust(t, p.Stop())
		n := calls.N()
		uv.UvtFence(t, u)
		if calls.N() != n {
			t.Errorf("a stopped poll was notified")
		}
		// Restarted: level-triggered, the unread byte is reported again.
		uv.UvtMust(t, p.Start())
		uv.UvtTurnUntil(t, u, "readable after restart", func() bool { return calls.N() > n })
		var buf [8]byte
		unix.Read(a, buf[:])
		uv.UvtMust(t, p.Close())
		last := calls.Calls()[calls.N()-1]
		if !errors.Is(last.Err, event.ErrClosed) {
			t.Errorf("last notification %+v, want ErrClosed", last)
		}
		if !fdOpen(a) {
			t.Error("a poll without CloseFD closed its descriptor")
		}
		if err := p.Start(); !errors.Is(err, event.ErrClosed) {
			t.Errorf("Start after Close = %v", err)
		}
		closeAndFinish(t, u)
	})
}

// A fresh socket is writable; a poll for both gets what fired, masked by
// its events.
func TestPollWritableAndMask(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		a, b := socketpair(t)
		p := newPoll(t, u, a, uv.Readable|uv.Writable, uv.PollOptions{})
		if got, want := p.Info(), "Poll(fd="+itoa(a)+", events=rw)"; got != want {
			t.Errorf("Info = %q, want %q", got, want)
		}
		calls := uv.UvtSubscribe(t, p, u.Owner().Owned)
		uv.UvtMust(t, p.Start())
		uv.UvtTurnUntil(t, u, "writable", func() bool { return calls.N() > 0 })
		if got := calls.Calls()[0].Result; got != uv.Writable {
			t.Errorf("first report %v, want w", got)
		}
		unix.Write(b, []byte("x"))
		uv.UvtTurnUntil(t, u, "readable and writable", func() bool {
			c := calls.Calls()
			return c[len(c)-1].Result == uv.Readable|uv.Writable
		})
		closeAndFinish(t, u, p)
	})
}

// The peer's close is a Disconnect (with Readable: the end of file waits);
// an error epoll reports (a pipe whose reader is gone) is a Disconnect too,
// after which the poll is stopped, as libuv stopped it.
func TestPollDisconnect(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		a, b := socketpair(t)
		p := newPoll(t, u, a, uv.Readable|uv.Disconnect, uv.PollOptions{})
		calls := uv.UvtSubscribe(t, p, u.Owner().Owned)
		uv.UvtMust(t, p.Start())
		unix.Close(b)
		uv.UvtTurnUntil(t, u, "disconnect", func() bool { return calls.N() > 0 })
		if got := calls.Calls()[0]; got.Result != uv.Readable|uv.Disconnect || got.Err != nil {
			t.Errorf("after the peer closed: %+v, want rd", got)
		}

		var pfd [2]int
		uv.UvtMust(t, unix.Pipe2(pfd[:], unix.O_CLOEXEC))
		defer unix.Close(pfd[1])
		w := newPoll(t, u, pfd[1], uv.Writable, uv.PollOptions{})
		wcalls := uv.UvtSubscribe(t, w, u.Owner().Owned)
		unix.Close(pfd[0])
		uv.UvtMust(t, w.Start())
		uv.UvtTurnUntil(t, u, "the pipe's error", func() bool { return wcalls.N() > 0 })
		if got := wcalls.Calls()[0]; got.Result != uv.Disconnect || got.Err != nil {
			t.Errorf("pipe without reader: %+v, want a Disconnect result", got)
		}
		if st := event.StateOf(w); st != event.Stopped {
			t.Errorf("state after the error = %v, want stopped", st)
		}
		if got := u.Stats().Active; got != 1 {
			t.Errorf("Active = %d, want 1 (the socket poll only)", got)
		}
		closeAndFinish(t, u, p, w)
	})
}

// Bad input gets a clear error, and the reactor goes on.
func TestPollBadInput(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		a, _ := socketpair(t)
		file, err := os.Create(filepath.Join(t.TempDir(), "f"))
		if err != nil {
			t.Fatal(err)
		}
		defer file.Close()
		// Closed before the reactor has a poll: on the pure-Go driver the
		// first poll makes the reactor's epoll descriptor, which must not
		// take the number before it is checked.
		early, _ := socketpair(t)
		unix.Close(early)
		if _, err := uv.NewPoll(u.Reactor, early, uv.Readable, uv.PollOptions{}); !errors.Is(err, syscall.EBADF) {
			t.Errorf("first poll, on a closed fd: %v, want EBADF", err)
		}
		taken := newPoll(t, u, a, uv.Readable, uv.PollOptions{})
		closed, _ := socketpair(t)
		unix.Close(closed)
		for _, tc := range []struct {
			name   string
			fd     int
			events uv.PollEvents
			want   error
		}{
			{"negative fd", -1, uv.Readable, syscall.EBADF},
			{"closed fd", closed, uv.Readable, syscall.EBADF},
			{"no events", a, 0, syscall.EINVAL},
			{"unknown events", a, 0x100, syscall.EINVAL},
			{"regular file", int(file.Fd()), uv.Readable, syscall.EPERM},
			{"second poll on a descriptor", a, uv.Writable, syscall.EEXIST},
		} {
			p, err := uv.NewPoll(u.Reactor, tc.fd, tc.events, uv.PollOptions{})
			if !errors.Is(err, tc.want) || p != nil {
				t.Errorf("%s: NewPoll = %v, %v; want %v", tc.name, p, err, tc.want)
			}
		}
		if _, err := uv.NewPoll(nil, a, uv.Readable, uv.PollOptions{}); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("nil reactor: %v", err)
		}
		if n := uv.UvtPolls(u); n != 1 {
			t.Errorf("after the refusals: %d polls, want the one", n)
		}
		// The descriptor is free again once its poll is closed.
		UvtMustClose(t, taken)
		again := newPoll(t, u, a, uv.Writable, uv.PollOptions{})
		calls := uv.UvtSubscribe(t, again, u.Owner().Owned)
		uv.UvtMust(t, again.Start())
		uv.UvtTurnUntil(t, u, "the new poll", func() bool { return calls.N() > 0 })
		closeAndFinish(t, u, again)
	})
}

// With CloseFD the descriptor is closed with the poll (by Close, or when
// the collector takes a dropped poll); without it, never.
func TestPollCloseFD(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		a, _ := socketpair(t)
		b, _ := socketpair(t)
		owned := newPoll(t, u, a, uv.Readable, uv.PollOptions{CloseFD: true})
		if !owned.Flags().Has(event.CloseFD) {
			t.Errorf("flags %v lack CloseFD", owned.Flags())
		}
		plain := newPoll(t, u, b, uv.Readable, uv.PollOptions{})
		if plain.Flags().Has(event.CloseFD) {
			t.Errorf("flags %v have CloseFD", plain.Flags())
		}
		uv.UvtMust(t, owned.Start())
		uv.UvtMust(t, owned.Close())
		if fdOpen(a) {
			t.Error("CloseFD: the descriptor is open after Close")
		}
		uv.UvtMust(t, plain.Close())
		if !fdOpen(b) {
			t.Error("without CloseFD the descriptor was closed")
		}

		c, _ := socketpair(t)
		func() {
			// Started and stopped: a started poll is the reactor's.
			p := newPoll(t, u, c, uv.Readable, uv.PollOptions{CloseFD: true})
			p.Start()
			p.Stop()
		}()
		uv.UvtCollectUntil(t, u, "the dropped poll's descriptor to close", func() bool { return !fdOpen(c) })
		closeAndFinish(t, u)
	})
}

// Close while busy: a poll closed from its own callback while data waits,
// and one closed by another goroutine while Serve delivers readiness on
// every turn.
func TestPollCloseWhileBusy(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		a, b := socketpair(t)
		unix.Write(b, []byte("pending"))
		p := newPoll(t, u, a, uv.Readable, uv.PollOptions{})
		var seen []error
		event.Subscribe(p, func(ev event.Event, _ any, err error) {
			seen = append(seen, err)
			ev.Close()
		})
		uv.UvtMust(t, p.Start())
		uv.UvtTurnUntil(t, u, "the close callback", func() bool { return len(seen) > 0 && u.Stats().CHandles == 0 })
		// The callback that closed the poll was the pass's only one: it is not
		// told again.
		if diff := cmp.Diff([]error{nil}, seen, cmpopts.EquateErrors()); diff != "" {
			t.Errorf("notifications (-want +got):\n%s", diff)
		}

		c, d := socketpair(t)
		unix.Write(d, []byte("pending"))
		q := newPoll(t, u, c, uv.Readable|uv.Writable, uv.PollOptions{})
		calls := uv.UvtSubscribe(t, q, u.Owner().Owned)
		uv.UvtMust(t, q.Start())
		stop := uv.UvtServe(t, u)
		calls.Next(t)
		uv.UvtMust(t, q.Close())
		uv.UvtWaitFor(t, "the handle to be freed", func() bool { return u.Stats().CHandles == 0 })
		stop()
		if c := calls.Calls(); !errors.Is(c[len(c)-1].Err, event.ErrClosed) {
			t.Errorf("last notification %+v, want ErrClosed", c[len(c)-1])
		}
		uv.UvtShutdown(t, u, false)
	})
}

// Start and Stop from many goroutines while Serve runs (run with -race).
func TestPollStartStopRace(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		a, _ := socketpair(t)
		p := newPoll(t, u, a, uv.Writable, uv.PollOptions{})
		uv.UvtSubscribe(t, p, u.Owner().Owned)
		stop := uv.UvtServe(t, u)
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 200 {
					if err := p.Start(); err != nil {
						t.Error(err)
						return
					}
					_ = p.Info()
					p.Stop()
				}
			}()
		}
		wg.Wait()
		if n := eventkind.LoopRefs(p); n != 0 {
			t.Errorf("LoopRefs = %d after balanced Starts and Stops", n)
		}
		stop()
		closeAndFinish(t, u, p)
	})
}

// G1 for polls: polls that own their descriptors, created and dropped
// without Close under GOGC=10, some started, leave no C handle and no
// descriptor once the collector and the loop have run.
func TestPollDroppedWithoutClose(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		const rounds, each = 10, 100
		var fds []int
		for round := range rounds {
			uv.UvtMust(t, u.Call(func() {
				for i := range each {
					pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
					if err != nil {
						t.Error(err)
						return
					}
					unix.Close(pair[1])
					p, err := uv.NewPoll(u.Reactor, pair[0], uv.Readable, uv.PollOptions{CloseFD: true})
					if err != nil {
						t.Error(err)
						return
					}
					if i%3 == 0 { // started and stopped: a started poll is the reactor's
						p.Start()
						p.Stop()
					}
					if round == rounds-1 {
						fds = append(fds, pair[0])
					}
				}
			}))
			runtime.GC()
			uv.UvtMust(t, u.RunOnce(context.Background()))
		}
		uv.UvtCollectUntil(t, u, "every dropped poll's handle", func() bool {
			s := u.Stats()
			return s.CHandles == 0 && s.Active == 0 && uv.UvtPolls(u) == 0
		})
		open := 0
		for _, fd := range fds {
			if fdOpen(fd) {
				open++
			}
		}
		// Descriptor numbers are reused by later rounds; the last round's are
		// checked, and only once every poll was collected.
		if open != 0 {
			t.Errorf("%d of the last round's descriptors are still open", open)
		}
		uv.UvtShutdown(t, u, false)
	})
}

func itoa(n int) string { return strconv.Itoa(n) }

// Out-of-band TCP data is Prioritized (EPOLLPRI); a poll for it alone is
// not told of ordinary data.
func TestPollPrioritized(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		uv.UvtMust(t, err)
		defer ln.Close()
		client, err := net.Dial("tcp", ln.Addr().String())
		uv.UvtMust(t, err)
		defer client.Close()
		server, err := ln.Accept()
		uv.UvtMust(t, err)
		defer server.Close()
		f, err := server.(*net.TCPConn).File() // a duplicate descriptor, ours
		uv.UvtMust(t, err)
		defer f.Close()

		p := newPoll(t, u, int(f.Fd()), uv.Prioritized, uv.PollOptions{})
		calls := uv.UvtSubscribe(t, p, u.Owner().Owned)
		uv.UvtMust(t, p.Start())
		client.Write([]byte("plain"))
		uv.UvtFence(t, u)
		if n := calls.N(); n != 0 {
			t.Fatalf("ordinary data notified a poll for p only: %+v", calls.Calls())
		}
		raw, err := client.(*net.TCPConn).SyscallConn()
		uv.UvtMust(t, err)
		var sendErr error
		raw.Write(func(fd uintptr) bool {
			sendErr = unix.Sendto(int(fd), []byte{'!'}, unix.MSG_OOB, nil)
			return true
		})
		uv.UvtMust(t, sendErr)
		uv.UvtTurnUntil(t, u, "the out-of-band byte", func() bool { return calls.N() > 0 })
		if got := calls.Calls()[0].Result; got != uv.Prioritized {
			t.Errorf("result %v, want p", got)
		}
		closeAndFinish(t, u, p)
	})
}
