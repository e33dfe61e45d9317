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
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/eventkind"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
	"golang.org/x/sys/unix"
)

// socketpair returns a connected pair of stream sockets, closed at the end
// of the test unless the test closed them itself.
func socketpair(t testing.TB) (a, b int) {
	t.Helper()
	fds, err := uv.UvtSocketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
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
		uv.UvtMust(t, uv.UvtPipe2(pfd[:], unix.O_CLOEXEC))
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
					pair, err := uv.UvtSocketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
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

// A poll whose descriptor stays readable (level-triggered: its callback
// never drains it) is delivered on every turn, and still cannot hold the
// loop from its timers and from work queued by other goroutines: on the
// pure-Go driver the loop then runs the poller's pass itself turn after
// turn, one pass per turn.
func TestPollAlwaysReadableLeavesRoomForTimersAndExec(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		r := u.Reactor
		p, err := eventfdPoll(r)
		if err != nil {
			t.Fatal(err)
		}
		if err := fireEventfd(p); err != nil {
			t.Fatal(err)
		}
		passes := 0
		if _, err := event.Subscribe(p, func(event.Event, any, error) { passes++ }); err != nil {
			t.Fatal(err)
		}
		if err := p.Start(); err != nil {
			t.Fatal(err)
		}
		tm, err := r.NewTimer(time.Millisecond, 0)
		if err != nil {
			t.Fatal(err)
		}
		fired := make(chan struct{})
		if _, err := event.Subscribe(tm, func(_ event.Event, _ any, err error) {
			if err == nil { // not the close's notification
				close(fired)
			}
		}); err != nil {
			t.Fatal(err)
		}
		if err := tm.Start(); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		served := make(chan error, 1)
		go func() { served <- r.Serve(ctx) }()
		<-fired // hangs (the test's timeout) if the poll starves the timer
		var seen int
		if err := r.Call(func() { seen = passes }); err != nil {
			t.Fatal(err)
		}
		if seen == 0 {
			t.Errorf("the readable poll was not delivered before the timer fired")
		}
		// The poll goes on being delivered while Calls keep coming: each
		// Call is answered, and the count of passes it reads grows.
		var before int
		r.Call(func() { before = passes })
		uv.UvtWaitFor(t, "the readable poll delivered again between Calls", func() bool {
			var now int
			if err := r.Call(func() { now = passes }); err != nil {
				t.Fatal(err)
			}
			return now > before
		})
		cancel()
		if err := <-served; err != nil && err != context.Canceled {
			t.Errorf("Serve = %v", err)
		}
		var buf [8]byte
		unix.Read(p.FD(), buf[:])
		p.Close()
		tm.Close()
		uv.UvtShutdown(t, u, false)
	})
}

// A descriptor closed by another goroutine after a poll's Start (or a
// change of its mask) and before the loop's turn that hands the change to
// epoll: libuv aborted the process in that turn (epoll_ctl's EBADF). Now
// the poll is stopped and its callbacks hear EBADF, and the reactor goes
// on. On the pure-Go driver the descriptor reached epoll at Start, which
// forgets it silently when it is closed: there is nothing to tell, and the
// rule (docs/kinds.md) is that closing a polled descriptor is the caller's
// bug; only a late EBADF, never a crash or another error, is allowed there.
func TestPollDescriptorClosedBeforeTurn(t *testing.T) {
	for _, c := range []struct {
		name  string
		reuse bool // the closing goroutine opens another pipe, which takes the number
		// start starts polling and returns what hears the poll's
		// reports: the poll, or its proxies once it has some.
		start func(t *testing.T, u *uv.UvtReactor, p *uv.Poll) []event.Event
	}{
		{"Start", false, func(t *testing.T, u *uv.UvtReactor, p *uv.Poll) []event.Event {
			uv.UvtMust(t, p.Start())
			return []event.Event{p}
		}},
		{"Start, the number reused", true, func(t *testing.T, u *uv.UvtReactor, p *uv.Poll) []event.Event {
			uv.UvtMust(t, p.Start())
			return []event.Event{p}
		}},
		{"mask widened by a proxy", false, func(t *testing.T, u *uv.UvtReactor, p *uv.Poll) []event.Event {
			r, err := uv.NewPollProxy(p, uv.Readable)
			uv.UvtMust(t, err)
			uv.UvtMust(t, r.Start())
			uv.UvtMust(t, u.RunNoWait(context.Background())) // epoll has the descriptor
			w, err := uv.NewPollProxy(p, uv.Prioritized)
			uv.UvtMust(t, err)
			uv.UvtMust(t, w.Start())
			return []event.Event{r, w}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
				var fds [2]int
				uv.UvtMust(t, uv.UvtPipe2(fds[:], unix.O_CLOEXEC))
				defer unix.Close(fds[1])
				p, err := uv.NewPoll(u.Reactor, fds[0], uv.Readable|uv.Prioritized, uv.PollOptions{})
				uv.UvtMust(t, err)
				var counters []*uv.UvtCounter
				for _, ev := range c.start(t, u, p) {
					counters = append(counters, uv.UvtSubscribe(t, ev, u.Owner().Owned))
				}
				closed := make(chan struct{})
				var other [2]int
				var reuseErr error
				go func() { // another goroutine of the program closes it
					defer close(closed)
					unix.Close(fds[0])
					if c.reuse {
						reuseErr = uv.UvtPipe2(other[:], unix.O_CLOEXEC)
					}
				}()
				<-closed
				if c.reuse {
					uv.UvtMust(t, reuseErr)
					defer unix.Close(other[0])
					defer unix.Close(other[1])
					if other[0] != fds[0] && other[1] != fds[0] {
						t.Logf("the new pipe took %v, not the number %d (taken meanwhile): the case is the plain close", other, fds[0])
					}
				}
				turns(t, u)
				var got []uv.UvtCall
				for _, c := range counters {
					got = append(got, c.Calls()...)
				}
				for _, call := range got {
					if !errors.Is(call.Err, syscall.EBADF) {
						t.Errorf("notification after the close: %v, %v; want only EBADF", call.Result, call.Err)
					}
				}
				if u.Driver() == reactor.DriverLibuv {
					if len(got) != len(counters) {
						t.Fatalf("notifications = %v, want one with EBADF for each of %d", got, len(counters))
					}
					if event.StateOf(p) == event.Active {
						t.Errorf("poll still active after EBADF: %v", event.StateOf(p))
					}
				}
				goesOn(t, u, p, "the closed descriptor")
			})
		})
	}
}

// A descriptor closed behind a poll, then a Start (or a mask change) and a
// turn: the caller gets EBADF and the reactor keeps running, on both
// drivers (libuv itself aborts the process when epoll refuses a
// descriptor).
func TestPollStartAfterDescriptorClosed(t *testing.T) {
	for _, c := range []struct {
		name string
		run  func(t *testing.T, u *uv.UvtReactor, fd int) (*uv.Poll, error)
	}{
		{"Start", func(t *testing.T, u *uv.UvtReactor, fd int) (*uv.Poll, error) {
			p, err := uv.NewPoll(u.Reactor, fd, uv.Readable, uv.PollOptions{})
			uv.UvtMust(t, err)
			unix.Close(fd)
			return p, p.Start()
		}},
		{"restart", func(t *testing.T, u *uv.UvtReactor, fd int) (*uv.Poll, error) {
			p, err := uv.NewPoll(u.Reactor, fd, uv.Readable, uv.PollOptions{})
			uv.UvtMust(t, err)
			uv.UvtMust(t, p.Start())
			uv.UvtMust(t, u.RunNoWait(context.Background()))
			unix.Close(fd)
			uv.UvtMust(t, p.Stop())
			return p, p.Start()
		}},
		{"proxy widens the mask", func(t *testing.T, u *uv.UvtReactor, fd int) (*uv.Poll, error) {
			p, err := uv.NewPoll(u.Reactor, fd, uv.Readable, uv.PollOptions{})
			uv.UvtMust(t, err)
			r, err := uv.NewPollProxy(p, uv.Readable)
			uv.UvtMust(t, err)
			uv.UvtMust(t, r.Start())
			uv.UvtMust(t, u.RunNoWait(context.Background()))
			unix.Close(fd)
			w, err := uv.NewPollProxy(p, uv.Writable)
			uv.UvtMust(t, err)
			return p, w.Start()
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
				fds, err := uv.UvtSocketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
				uv.UvtMust(t, err)
				defer unix.Close(fds[1])
				p, err := c.run(t, u, fds[0])
				if !errors.Is(err, syscall.EBADF) {
					t.Errorf("Start over a closed descriptor = %v, want EBADF", err)
				}
				turns(t, u)
				goesOn(t, u, p, "the refused Start")
			})
		})
	}
}

// goesOn checks that u still runs after what befell the poll p: a trigger
// fires. Then it closes p and shuts u down.
func goesOn(t *testing.T, u *uv.UvtReactor, p *uv.Poll, after string) {
	t.Helper()
	tr := uv.UvtNewTrigger(t, u)
	uv.UvtMust(t, tr.Start())
	uv.UvtMust(t, tr.Send())
	uv.UvtTurnUntil(t, u, "a trigger after "+after, func() bool {
		_, fired := uv.UvtInfoCounts(t, tr)
		return fired > 0
	})
	tr.Close()
	p.Close()
	uv.UvtShutdown(t, u, false)
}

// The tests of this file start a poll again from the callback that hears
// its error. Polling stops with an error, and libuv's uv__poll_io stops
// the handle before it calls the callback, so a uv_poll_start there polls
// again. So must a Start here, on both drivers, of the poll or of a
// proxy: it returns nil, and it must not be undone once the callbacks
// have run.

// refusedUDP returns a UDP socket connected to a loopback port nobody
// listens on, with the refusal pending (SO_ERROR): epoll reports an error
// on it until the error is taken.
func refusedUDP(t *testing.T) int {
	t.Helper()
	probe, err := uv.UvtSocket(unix.AF_INET, unix.SOCK_DGRAM, 0)
	uv.UvtMust(t, err)
	uv.UvtMust(t, unix.Bind(probe, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}))
	sa, err := unix.Getsockname(probe)
	uv.UvtMust(t, err)
	unix.Close(probe) // the port is free now: nothing listens there
	fd, err := uv.UvtSocket(unix.AF_INET, unix.SOCK_DGRAM, 0)
	uv.UvtMust(t, err)
	uv.UvtMust(t, unix.Connect(fd, sa))
	_, err = unix.Write(fd, []byte("x"))
	uv.UvtMust(t, err)
	// The ICMP refusal comes on its own: wait for it (the bound is only a
	// safety net).
	p := []unix.PollFd{{Fd: int32(fd)}}
	if n, err := unix.Poll(p, 10_000); err != nil || n != 1 || p[0].Revents&unix.POLLERR == 0 {
		t.Fatalf("no refusal pending on the UDP socket: poll = %d, %v, revents %#x", n, err, p[0].Revents)
	}
	return fd
}

// takeError takes a socket's pending error: epoll reports no error on it
// any more.
func takeError(t *testing.T, fd int) {
	if _, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ERROR); err != nil {
		t.Error(err)
	}
}

// TestPollStartedAgainByErrorCallback: the poll's callback takes the
// socket's error and starts the poll again when it hears it; the poll is
// then started and polls for Writable.
func TestPollStartedAgainByErrorCallback(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		fd := refusedUDP(t)
		p, err := uv.NewPoll(u.Reactor, fd, uv.Writable, uv.PollOptions{CloseFD: true})
		uv.UvtMust(t, err)
		calls := 0 // loop-owned
		var startErr error
		event.Subscribe(p, func(_ event.Event, res any, err error) {
			if errors.Is(err, event.ErrClosed) {
				return
			}
			calls++
			if calls == 1 {
				takeError(t, fd)
				startErr = p.Start()
			}
		})
		uv.UvtMust(t, u.Call(func() { uv.UvtMust(t, p.Start()) }))
		uv.UvtWaitFor(t, "the first error", func() bool {
			n := 0
			u.Call(func() { n = calls })
			return n > 0
		})
		var state event.State
		uv.UvtMust(t, u.Call(func() { state = event.StateOf(p) }))
		if startErr != nil || state != event.Active {
			t.Errorf("after a Start from the error callback (err %v), the poll is %v, want active", startErr, state)
		}
		if m := uv.UvtPolling(p); m != uv.Writable {
			t.Errorf("after a Start from the error callback, the poll polls for %v, want %v", m, uv.Writable)
		}
		uv.UvtMust(t, u.Call(func() { p.Close() }))
		stop()
		uv.UvtShutdown(t, u, false)
	})
}

// TestPollProxyStartedAgainByErrorCallback: as above with two proxies:
// both hear the error, and the one whose callback starts it again is
// started and polled for; the other stays stopped.
func TestPollProxyStartedAgainByErrorCallback(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		fd := refusedUDP(t)
		p, err := uv.NewPoll(u.Reactor, fd, uv.Writable, uv.PollOptions{CloseFD: true})
		uv.UvtMust(t, err)
		var xs [2]*uv.PollProxy
		var heard [2]int // loop-owned
		var startErr error
		uv.UvtMust(t, u.Call(func() {
			for i := range xs {
				xs[i], err = uv.NewPollProxy(p, uv.Writable)
				uv.UvtMust(t, err)
				event.Subscribe(xs[i], func(_ event.Event, res any, err error) {
					if errors.Is(err, event.ErrClosed) {
						return
					}
					heard[i]++
					if i == 0 && heard[i] == 1 {
						takeError(t, fd)
						startErr = xs[i].Start()
					}
				})
				uv.UvtMust(t, xs[i].Start())
			}
		}))
		uv.UvtWaitFor(t, "the error", func() bool {
			n := 0
			u.Call(func() { n = heard[1] })
			return n > 0
		})
		var states [2]event.State
		uv.UvtMust(t, u.Call(func() {
			for i, x := range xs {
				states[i] = event.StateOf(x)
			}
		}))
		if startErr != nil || states[0] != event.Active {
			t.Errorf("after a Start from its error callback (err %v), the proxy is %v, want active", startErr, states[0])
		}
		if states[1] == event.Active {
			t.Errorf("the proxy not started again is %v, want stopped", states[1])
		}
		if m := uv.UvtPolling(p); m != uv.Writable {
			t.Errorf("with a proxy started again, the poll polls for %v, want %v", m, uv.Writable)
		}
		uv.UvtMust(t, u.Call(func() { p.Close() }))
		stop()
		uv.UvtShutdown(t, u, false)
	})
}

// reuseFD opens a descriptor of some kind, to take a number just closed.
type reuseFD struct {
	name string
	open func() (int, error)
}

var reuseKinds = []reuseFD{
	{"socket", func() (int, error) { return uv.UvtSocket(unix.AF_UNIX, unix.SOCK_STREAM, 0) }},
	{"pipe", func() (int, error) {
		var p [2]int
		if err := uv.UvtPipe2(p[:], unix.O_CLOEXEC); err != nil {
			return -1, err
		}
		unix.Close(p[1])
		return p[0], nil
	}},
	{"eventfd", func() (int, error) { return uv.UvtEventfd(false) }},
	{"epoll", func() (int, error) { return uv.UvtEpollCreate() }},
	{"/dev/null", func() (int, error) { return unix.Open(os.DevNull, unix.O_RDONLY|unix.O_CLOEXEC, 0) }},
}

// turns runs a few bounded turns of the loop.
func turns(t *testing.T, u *uv.UvtReactor) {
	t.Helper()
	for range 3 {
		ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
		if err := u.RunOnce(ctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
			t.Fatal(err)
		}
		cancel()
	}
}

// A pipe polled through several proxies is closed after the proxies'
// Start, and its number taken by a socket, a pipe, an eventfd, an epoll
// instance or /dev/null before the loop's turn: the process lives, only
// EBADF is heard (on libuv, once by each proxy, and the poll stops, so Run
// ends with nothing active);
// afterwards a proxy's Start is refused with EBADF, Stop does nothing, and
// the poll's and the reactor's Close end clean. Both drivers.
func TestPollDescriptorReusedBetweenStartAndTurn(t *testing.T) {
	for _, k := range reuseKinds {
		t.Run(k.name, func(t *testing.T) {
			uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
				var fds [2]int
				uv.UvtMust(t, uv.UvtPipe2(fds[:], unix.O_CLOEXEC))
				defer unix.Close(fds[1])
				p, err := uv.NewPoll(u.Reactor, fds[0], uv.Readable|uv.Prioritized|uv.Disconnect, uv.PollOptions{})
				uv.UvtMust(t, err)
				var proxies []*uv.PollProxy
				var counters []*uv.UvtCounter
				for _, m := range []uv.PollEvents{uv.Readable, uv.Prioritized, uv.Readable | uv.Disconnect} {
					x, err := uv.NewPollProxy(p, m)
					uv.UvtMust(t, err)
					uv.UvtMust(t, x.Start())
					proxies = append(proxies, x)
					counters = append(counters, uv.UvtSubscribe(t, x, u.Owner().Owned))
				}
				unix.Close(fds[0])
				nfd, err := k.open()
				uv.UvtMust(t, err)
				defer unix.Close(nfd)
				if nfd != fds[0] {
					t.Logf("the %s took %d, not the number %d: the case is the plain close", k.name, nfd, fds[0])
				}
				turns(t, u)
				for i, c := range counters {
					calls := c.Calls()
					for _, call := range calls {
						if !errors.Is(call.Err, syscall.EBADF) {
							t.Errorf("proxy %d heard %v, %v; want only EBADF", i, call.Result, call.Err)
						}
					}
					if u.Driver() == reactor.DriverLibuv && len(calls) != 1 {
						t.Errorf("proxy %d heard %d notifications, want one EBADF", i, len(calls))
					}
				}
				if u.Driver() == reactor.DriverLibuv {
					if s := event.StateOf(p); s == event.Active {
						t.Errorf("poll %v after EBADF, want it stopped", s)
					}
					// Nothing is left active: Run ends at once, rather than
					// wait for a poll that can never fire.
					ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
					if err := u.Run(ctx); err != nil {
						t.Errorf("Run after EBADF = %v, want nil (no active event left)", err)
					}
					cancel()
					for i, x := range proxies {
						if err := x.Start(); !errors.Is(err, syscall.EBADF) {
							t.Errorf("proxy %d Start after EBADF = %v, want EBADF", i, err)
						}
					}
				}
				for i, x := range proxies {
					if err := x.Stop(); err != nil {
						t.Errorf("proxy %d Stop = %v", i, err)
					}
				}
				turns(t, u)
				for i, x := range proxies {
					if err := x.Close(); err != nil {
						t.Errorf("proxy %d Close = %v", i, err)
					}
				}
				uv.UvtMust(t, p.Close())
				uv.UvtShutdown(t, u, false)
			})
		})
	}
}

// The reactor's Close right after a polled descriptor was closed behind
// its started poll, with no turn between: Close ends clean, the process
// lives. Both drivers.
func TestPollDescriptorClosedThenReactorClose(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		var fds [2]int
		uv.UvtMust(t, uv.UvtPipe2(fds[:], unix.O_CLOEXEC))
		defer unix.Close(fds[1])
		p, err := uv.NewPoll(u.Reactor, fds[0], uv.Readable, uv.PollOptions{})
		uv.UvtMust(t, err)
		x, err := uv.NewPollProxy(p, uv.Readable)
		uv.UvtMust(t, err)
		uv.UvtMust(t, x.Start())
		uv.UvtMust(t, p.Start())
		unix.Close(fds[0])
		uv.UvtShutdown(t, u, false)
		if err := x.Start(); err == nil {
			t.Errorf("proxy Start after the reactor's Close = nil, want an error")
		}
	})
}

// A poll's Close from another goroutine racing the descriptor's close and
// reuse and the loop's turn: whichever comes first, the process lives, the
// poll ends closed, only EBADF is reported and no handle is left. Both
// drivers.
func TestPollCloseRacingDescriptorCheck(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		for range 100 {
			var fds [2]int
			uv.UvtMust(t, uv.UvtPipe2(fds[:], unix.O_CLOEXEC))
			p, err := uv.NewPoll(u.Reactor, fds[0], uv.Readable, uv.PollOptions{})
			uv.UvtMust(t, err)
			x, err := uv.NewPollProxy(p, uv.Readable)
			uv.UvtMust(t, err)
			if err := x.Start(); err != nil && !errors.Is(err, syscall.EBADF) {
				t.Fatal(err)
			}
			closed := make(chan struct{})
			go func() {
				defer close(closed)
				p.Close()
			}()
			unix.Close(fds[0])
			efd, err := uv.UvtEventfd(false)
			uv.UvtMust(t, err)
			<-closed
			unix.Close(efd)
			unix.Close(fds[1])
			if err := x.Start(); !errors.Is(err, event.ErrClosed) && !errors.Is(err, syscall.EBADF) {
				t.Errorf("proxy Start after the poll's Close = %v, want ErrClosed", err)
			}
			x.Close()
		}
		stop()
		// A proxy nobody listens to that hears EBADF (the check came before
		// the Close) reports it as an unhandled error: the program's bug,
		// told; nothing else may be reported.
		for _, r := range u.Reports() {
			if !errors.Is(r.Err, syscall.EBADF) {
				t.Errorf("report %v, want only EBADF", r)
			}
		}
		uv.UvtShutdown(t, u, true)
	})
}

// A polled pipe that epoll has already (a turn ran since its Start) is
// closed behind the poll and its number taken by another pipe. A Start that
// hands the descriptor to epoll again — a proxy's Start that widens the
// mask, or the poll's Start once it stopped — is refused with EBADF on
// both drivers, as a Start after a plain close is: the number no longer
// names the file the poll was made for, and polling the newcomer instead
// would report another file's readiness as this one's.
func TestPollStartAfterDescriptorReused(t *testing.T) {
	for _, c := range []struct {
		name  string
		proxy bool // polled through a proxy (else the poll itself)
		start func(t *testing.T, p *uv.Poll, r *uv.PollProxy) error
	}{
		{"a proxy's Start widening the mask", true, func(t *testing.T, p *uv.Poll, _ *uv.PollProxy) error {
			w, err := uv.NewPollProxy(p, uv.Writable)
			uv.UvtMust(t, err)
			return w.Start()
		}},
		{"the poll's Start after it stopped", false, func(t *testing.T, p *uv.Poll, _ *uv.PollProxy) error {
			uv.UvtMust(t, p.Stop())
			return p.Start()
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
				var fds [2]int
				uv.UvtMust(t, uv.UvtPipe2(fds[:], unix.O_CLOEXEC))
				p, err := uv.NewPoll(u.Reactor, fds[0], uv.Readable|uv.Writable, uv.PollOptions{})
				uv.UvtMust(t, err)
				var r *uv.PollProxy
				if c.proxy {
					r, err = uv.NewPollProxy(p, uv.Readable)
					uv.UvtMust(t, err)
					uv.UvtMust(t, r.Start())
				} else {
					uv.UvtMust(t, p.Start())
				}
				turns(t, u) // epoll has the descriptor
				unix.Close(fds[0])
				unix.Close(fds[1])
				var other [2]int
				uv.UvtMust(t, uv.UvtPipe2(other[:], unix.O_CLOEXEC))
				defer unix.Close(other[0])
				defer unix.Close(other[1])
				if other[0] != fds[0] {
					t.Skipf("the new pipe took %v, not the number %d: nothing reused to check", other, fds[0])
				}
				if err := c.start(t, p, r); !errors.Is(err, syscall.EBADF) {
					t.Errorf("Start after the number was reused = %v, want EBADF", err)
				}
				turns(t, u)
				p.Close()
				uv.UvtShutdown(t, u, true)
			})
		})
	}
}
