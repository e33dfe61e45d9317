package uv_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/eventkind"
	"github.com/uvevent/uvevent/uv"
	"golang.org/x/sys/unix"
)

func newProxy(t testing.TB, p *uv.Poll, events uv.PollEvents) *uv.PollProxy {
	t.Helper()
	x, err := uv.NewPollProxy(p, events)
	if err != nil {
		t.Fatalf("NewPollProxy: %v", err)
	}
	return x
}

// readerWriter makes a socket pair, a poll on its first end and two
// proxies over it: a reader and a writer.
func readerWriter(t testing.TB, u *uv.UvtReactor) (a, b int, p *uv.Poll, r, w *uv.PollProxy) {
	t.Helper()
	a, b = socketpair(t)
	p = newPoll(t, u, a, uv.Readable, uv.PollOptions{})
	return a, b, p, newProxy(t, p, uv.Readable), newProxy(t, p, uv.Writable)
}

// The poll's mask follows the started proxies, on every Start and Stop;
// the last Stop stops polling.
func TestPollProxyMaskFollowsStarts(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		a, _, p, r, w := readerWriter(t, u)
		d := newProxy(t, p, uv.Readable|uv.Disconnect)
		type state struct {
			Info     string
			Polling  uv.PollEvents
			PollRefs int
		}
		look := func() state {
			return state{p.Info(), uv.UvtPolling(p), eventkind.LoopRefs(p)}
		}
		info := func(ev string) string { return fmt.Sprintf("Poll(fd=%d, events=%s, proxies=3)", a, ev) }
		steps := []struct {
			name string
			op   func() error
			want state
		}{
			{"none started", func() error { return nil }, state{info("none"), 0, 0}},
			{"start r", r.Start, state{info("r"), uv.Readable, 1}},
			{"start w", w.Start, state{info("rw"), uv.Readable | uv.Writable, 1}},
			{"start rd", d.Start, state{info("rwd"), uv.Readable | uv.Writable | uv.Disconnect, 1}},
			{"start r again (counts)", r.Start, state{info("rwd"), uv.Readable | uv.Writable | uv.Disconnect, 1}},
			{"stop r once", r.Stop, state{info("rwd"), uv.Readable | uv.Writable | uv.Disconnect, 1}},
			{"stop r", r.Stop, state{info("rwd"), uv.Readable | uv.Writable | uv.Disconnect, 1}},
			{"stop rd", d.Stop, state{info("w"), uv.Writable, 1}},
			{"stop w: the last", w.Stop, state{info("none"), 0, 0}},
			{"restart rd", d.Start, state{info("rd"), uv.Readable | uv.Disconnect, 1}},
		}
		for _, s := range steps {
			uv.UvtMust(t, s.op())
			if diff := cmp.Diff(s.want, look()); diff != "" {
				t.Errorf("%s (-want +got):\n%s", s.name, diff)
			}
		}
		closeAndFinish(t, u, p)
		if !d.Flags().Has(event.Closed) || !r.Flags().Has(event.Closed) {
			t.Error("closing the poll left proxies open")
		}
	})
}

// Readiness reaches the proxies it matches, masked; a disconnect reaches
// them all with their full sets; the poll's own callbacks hear nothing
// while proxies exist, and again once they are closed.
func TestPollProxyDispatch(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		a, b := socketpair(t)
		p := newPoll(t, u, a, uv.Readable, uv.PollOptions{})
		own := uv.UvtSubscribe(t, p, u.Owner().Owned)
		uv.UvtMust(t, p.Start())
		r := newProxy(t, p, uv.Readable)
		w := newProxy(t, p, uv.Writable)
		pr := newProxy(t, p, uv.Prioritized)
		rc, wc, pc := uv.UvtSubscribe(t, r, u.Owner().Owned), uv.UvtSubscribe(t, w, u.Owner().Owned), uv.UvtSubscribe(t, pr, u.Owner().Owned)
		for _, x := range []*uv.PollProxy{r, w, pr} {
			uv.UvtMust(t, x.Start())
		}
		uv.UvtTurnUntil(t, u, "writable", func() bool { return wc.N() > 0 })
		unix.Write(b, []byte("x"))
		uv.UvtTurnUntil(t, u, "readable", func() bool { return rc.N() > 0 })
		if got := rc.Calls()[0]; got.Result != uv.Readable || got.Err != nil || got.Event != event.Event(r) {
			t.Errorf("reader got %+v, want r from its proxy", got)
		}
		for _, c := range wc.Calls() {
			if c.Result != uv.Writable {
				t.Errorf("writer got %v, want w only", c.Result)
			}
		}
		if pc.N() != 0 || own.N() != 0 {
			t.Errorf("prioritized proxy told %d times, poll %d times; want none", pc.N(), own.N())
		}
		// Disconnect: every started proxy hears it with its full set.
		uv.UvtMust(t, pr.Close())
		d := newProxy(t, p, uv.Disconnect)
		dc := uv.UvtSubscribe(t, d, u.Owner().Owned)
		uv.UvtMust(t, d.Start())
		unix.Close(b)
		uv.UvtTurnUntil(t, u, "the disconnect", func() bool { return dc.N() > 0 })
		want := map[string]uv.PollEvents{"r": uv.Readable | uv.Disconnect, "w": uv.Writable | uv.Disconnect, "d": uv.Disconnect}
		got := map[string]uv.PollEvents{}
		for name, c := range map[string]*uv.UvtCounter{"r": rc, "w": wc, "d": dc} {
			calls := c.Calls()
			got[name] = calls[len(calls)-1].Result.(uv.PollEvents)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("last deliveries after the disconnect (-want +got):\n%s", diff)
		}
		if own.N() != 0 {
			t.Errorf("the poll's own callbacks were told %d times while proxies exist", own.N())
		}
		// Proxies closed: the poll is itself again.
		for _, x := range []*uv.PollProxy{r, w, d} {
			uv.UvtMust(t, x.Close())
		}
		if got := uv.UvtPolling(p); got != uv.Readable {
			t.Errorf("after the proxies closed the poll polls for %v, want its own r", got)
		}
		if got, want := p.Info(), fmt.Sprintf("Poll(fd=%d, events=r)", a); got != want {
			t.Errorf("Info = %q, want %q", got, want)
		}
		uv.UvtTurnUntil(t, u, "the poll's own notification", func() bool { return own.N() > 0 })
		closeAndFinish(t, u, p)
	})
}

// One goroutine reads and one writes the same socket through two proxies
// while Serve runs; a third echoes on the other end (run with -race).
func TestPollProxyReaderAndWriter(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		a, b, p, r, w := readerWriter(t, u)
		readable, writable := make(chan struct{}, 1), make(chan struct{}, 1)
		signal := func(ch chan struct{}) event.CallbackFunc {
			return func(_ event.Event, _ any, err error) {
				select {
				case ch <- struct{}{}:
				default:
				}
			}
		}
		event.Subscribe(r, signal(readable))
		event.Subscribe(w, signal(writable))
		uv.UvtMust(t, r.Start())
		stop := uv.UvtServe(t, u)

		const total = 1 << 20
		msg := make([]byte, total)
		for i := range msg {
			msg[i] = byte(i * 7)
		}
		go func() { // the peer echoes, blocking
			buf := make([]byte, 4096)
			for {
				n, err := unix.Read(b, buf)
				if n <= 0 || err != nil {
					return
				}
				for off := 0; off < n; {
					m, err := unix.Write(b, buf[off:n])
					if err != nil {
						return
					}
					off += m
				}
			}
		}()
		var wg sync.WaitGroup
		wg.Add(2)
		var writeErr error
		go func() { // writer: on EAGAIN, waits for its proxy
			defer wg.Done()
			for off := 0; off < total; {
				n, err := unix.Write(a, msg[off:min(off+8192, total)])
				if err == unix.EAGAIN {
					if writeErr = w.Start(); writeErr != nil {
						return
					}
					uv.UvtRecv(t, writable, "writable")
					w.Stop()
					continue
				}
				if err != nil {
					writeErr = err
					return
				}
				off += n
			}
		}()
		got := make([]byte, 0, total)
		go func() { // reader: reads what the proxy says is there
			defer wg.Done()
			buf := make([]byte, 8192)
			for len(got) < total {
				n, err := unix.Read(a, buf)
				if err == unix.EAGAIN {
					uv.UvtRecv(t, readable, "readable")
					continue
				}
				if err != nil || n == 0 {
					t.Errorf("read: %d, %v", n, err)
					return
				}
				got = append(got, buf[:n]...)
			}
		}()
		wg.Wait()
		if writeErr != nil {
			t.Fatalf("writer: %v", writeErr)
		}
		if !bytes.Equal(got, msg) {
			t.Fatalf("echo differs: %d bytes back of %d", len(got), total)
		}
		stop()
		closeAndFinish(t, u, p)
	})
}

// Bad input, a proxy on a closed poll, and closing while busy: a proxy
// closed by its own callback, the poll closed from a proxy's callback.
func TestPollProxyBadInputAndCloseWhileBusy(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		a, b := socketpair(t)
		p := newPoll(t, u, a, uv.Readable, uv.PollOptions{})
		for _, tc := range []struct {
			name   string
			p      *uv.Poll
			events uv.PollEvents
		}{{"nil poll", nil, uv.Readable}, {"no events", p, 0}, {"unknown events", p, 0x40}} {
			if x, err := uv.NewPollProxy(tc.p, tc.events); !errors.Is(err, syscall.EINVAL) || x != nil {
				t.Errorf("%s: %v, %v; want EINVAL", tc.name, x, err)
			}
		}
		self := newProxy(t, p, uv.Writable)
		var selfSeen []error
		event.Subscribe(self, func(ev event.Event, _ any, err error) { selfSeen = append(selfSeen, err); ev.Close() })
		closer := newProxy(t, p, uv.Readable)
		event.Subscribe(closer, func(event.Event, any, error) { p.Close() })
		other := newProxy(t, p, uv.Readable)
		oc := uv.UvtSubscribe(t, other, u.Owner().Owned)
		for _, x := range []*uv.PollProxy{self, closer, other} {
			uv.UvtMust(t, x.Start())
		}
		uv.UvtTurnUntil(t, u, "the self-closing proxy", func() bool { return len(selfSeen) > 0 })
		if self.Flags().Has(event.Closed) != true || len(selfSeen) != 1 {
			t.Errorf("self-closing proxy: closed=%v, told %v", self.Flags().Has(event.Closed), selfSeen)
		}
		if got, want := uv.UvtPolling(p), uv.Readable; got != want {
			t.Errorf("polling %v after the writer closed, want %v", got, want)
		}
		unix.Write(b, []byte("x"))
		uv.UvtTurnUntil(t, u, "the poll to close", func() bool { return u.Stats().CHandles == 0 && uv.UvtPolls(u) == 0 })
		if c := oc.Calls(); len(c) == 0 || !errors.Is(c[len(c)-1].Err, event.ErrClosed) {
			t.Errorf("the other proxy was told %+v, want ErrClosed last", c)
		}
		if err := other.Start(); !errors.Is(err, event.ErrClosed) {
			t.Errorf("Start on a proxy of a closed poll = %v", err)
		}
		if _, err := uv.NewPollProxy(p, uv.Readable); !errors.Is(err, event.ErrClosed) {
			t.Errorf("NewPollProxy on a closed poll = %v", err)
		}
		uv.UvtShutdown(t, u, false)
	})
}

// A proxy dropped while stopped is collected and stops counting; polls
// and proxies all dropped without Close under GOGC=10, some started, leave
// no C handle.
func TestPollProxyDropped(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		a, _ := socketpair(t)
		p := newPoll(t, u, a, uv.Readable, uv.PollOptions{})
		uv.UvtMust(t, p.Start())
		func() {
			x := newProxy(t, p, uv.Writable)
			x.Start()
			x.Stop()
		}()
		if got := uv.UvtPolling(p); got != 0 {
			t.Errorf("a started poll with a stopped proxy polls for %v, want nothing", got)
		}
		// No loop runs (the started poll would keep RunOnce waiting): the
		// cleanup's Post runs at once.
		uv.UvtWaitFor(t, "the dropped proxy, and the poll polling for its own events", func() bool {
			runtime.GC()
			return p.Info() == fmt.Sprintf("Poll(fd=%d, events=r)", a) && uv.UvtPolling(p) == uv.Readable
		})
		uv.UvtMust(t, p.Stop())
		for i := range 200 {
			c, _ := socketpair(t)
			func() {
				q := newPoll(t, u, c, uv.Readable, uv.PollOptions{})
				x := newProxy(t, q, uv.Readable)
				newProxy(t, q, uv.Writable)
				x.Start()
				if i%2 == 0 {
					x.Stop() // else it is dropped started: it goes on until the reactor closes
				}
			}()
		}
		runtime.GC()
		uv.UvtCollectUntil(t, u, "the dropped polls with stopped proxies", func() bool { return uv.UvtPolls(u) == 1+100 })
		if got := u.Stats().Active; got != 2*100 {
			t.Errorf("Active = %d, want the 100 started proxies and their polls", got)
		}
		UvtMustClose(t, p)
		uv.UvtShutdown(t, u, false) // closes the polls kept by their started proxies
	})
}

// Two readers of one stream socket: whichever is told first takes all the
// data, and the other is not told of a readiness that is gone (the peek).
func TestPollProxySpuriousReadinessDropped(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		a, b := socketpair(t)
		p := newPoll(t, u, a, uv.Readable, uv.PollOptions{})
		var told []string
		drain := func(name string) event.CallbackFunc {
			return func(_ event.Event, res any, err error) {
				if err != nil {
					return
				}
				told = append(told, name)
				buf := make([]byte, 64)
				for {
					if n, _ := unix.Read(a, buf); n <= 0 {
						return
					}
				}
			}
		}
		r1, r2 := newProxy(t, p, uv.Readable), newProxy(t, p, uv.Readable)
		event.Subscribe(r1, drain("r1"))
		event.Subscribe(r2, drain("r2"))
		uv.UvtMust(t, r1.Start())
		uv.UvtMust(t, r2.Start())
		for i := range 5 {
			unix.Write(b, []byte("data"))
			uv.UvtTurnUntil(t, u, "a reader", func() bool { return len(told) >= i+1 })
			uv.UvtFence(t, u)
			if len(told) != i+1 {
				t.Fatalf("write %d: told %v: a reader was told of data the other had taken", i, told)
			}
		}
		closeAndFinish(t, u, p)
	})
}

// Proxies started and stopped from several goroutines, while one proxy
// stays started, the poll's user starts and stops the event behind the
// poll with a Stop too many each time, and data keeps the descriptor
// readable: the extra Stops never take the started proxies' Start away,
// so once the others have undone their Starts the poll polls for exactly
// the remaining proxy's events, and for nothing after its Stop.
func TestPollProxyConcurrentStartStop(t *testing.T) {
	const rounds = 200
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		a, b := socketpair(t)
		p := newPoll(t, u, a, uv.Readable, uv.PollOptions{})
		kept := newProxy(t, p, uv.Readable)
		xs := []*uv.PollProxy{kept, newProxy(t, p, uv.Writable), newProxy(t, p, uv.Readable|uv.Writable)}
		for _, x := range xs {
			if _, err := event.Subscribe(x, func(_ event.Event, _ any, err error) {
				if err != nil && !errors.Is(err, event.ErrClosed) {
					t.Errorf("proxy told %v", err)
				}
			}); err != nil {
				t.Fatal(err)
			}
		}
		uv.UvtMust(t, kept.Start())
		stop := uv.UvtServe(t, u)
		var wg sync.WaitGroup
		toggle := func(ev event.Event, stops int) {
			defer wg.Done()
			for range rounds {
				if err := ev.Start(); err != nil {
					t.Errorf("Start of %s: %v", ev.Info(), err)
					return
				}
				for range stops {
					if err := ev.Stop(); err != nil {
						t.Errorf("Stop of %s: %v", ev.Info(), err)
						return
					}
				}
			}
		}
		for _, x := range xs[1:] {
			wg.Add(1)
			go toggle(x, 1)
		}
		wg.Add(2)
		go toggle(event.Deref(p), 2)
		go func() {
			defer wg.Done()
			for range rounds {
				unix.Write(b, []byte{1})
			}
		}()
		wg.Wait()
		stop()
		if got := uv.UvtPolling(p); got != uv.Readable {
			t.Errorf("one proxy left started: polling for %v, want %v", got, uv.Readable)
		}
		uv.UvtMust(t, kept.Stop())
		if got := uv.UvtPolling(p); got != 0 {
			t.Errorf("every Start undone: polling for %v, want nothing", got)
		}
		closeAndFinish(t, u, p)
	})
}

// Proxies started and stopped from several goroutines while another closes
// the poll: every Start after the close is refused with ErrClosed, nothing
// panics or aborts, and the poll's handle is gone afterwards.
func TestPollProxyStartStopRacesPollClose(t *testing.T) {
	const rounds = 100
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		for range 10 {
			a, b := socketpair(t)
			unix.Write(b, []byte{1})
			p := newPoll(t, u, a, uv.Readable, uv.PollOptions{})
			xs := []*uv.PollProxy{newProxy(t, p, uv.Readable), newProxy(t, p, uv.Writable)}
			var wg sync.WaitGroup
			toggle := func(ev event.Event) {
				defer wg.Done()
				for range rounds {
					if err := ev.Start(); err != nil {
						if !errors.Is(err, event.ErrClosed) {
							t.Errorf("Start of %s: %v, want nil or ErrClosed", ev.Info(), err)
						}
						return
					}
					ev.Stop()
				}
			}
			for _, x := range xs {
				wg.Add(1)
				go toggle(x)
			}
			wg.Add(2)
			go toggle(event.Deref(p))
			go func() {
				defer wg.Done()
				if err := p.Close(); err != nil {
					t.Errorf("poll Close: %v", err)
				}
			}()
			wg.Wait()
			for _, x := range xs {
				if err := x.Start(); !errors.Is(err, event.ErrClosed) {
					t.Errorf("proxy Start after the poll's Close = %v, want ErrClosed", err)
				}
			}
		}
		stop()
		uv.UvtTurnUntil(t, u, "the close callbacks", func() bool { return u.Stats().CHandles == 0 && uv.UvtPolls(u) == 0 })
		uv.UvtShutdown(t, u, false)
	})
}

// A proxy Start that fails (its wider mask refused: the descriptor was
// closed behind the poll) takes nothing: the poll's user, stopping the
// poll they started, stops it — it no longer counts as active, so Run can
// end, and nothing is polled for — instead of the poll staying started for
// a proxy that never was.
func TestPollProxyFailedStartHoldsNothing(t *testing.T) {
	for _, viaDeref := range []bool{false, true} {
		name := map[bool]string{false: "Poll.Stop", true: "Stop of the event behind the poll"}[viaDeref]
		t.Run(name, func(t *testing.T) {
			uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
				fds, err := uv.UvtSocketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
				uv.UvtMust(t, err)
				defer unix.Close(fds[1])
				base := u.Stats().Active
				p := newPoll(t, u, fds[0], uv.Readable, uv.PollOptions{})
				uv.UvtMust(t, p.Start())
				uv.UvtMust(t, u.RunNoWait(context.Background()))
				unix.Close(fds[0])
				x := newProxy(t, p, uv.Writable)
				if err := x.Start(); !errors.Is(err, syscall.EBADF) {
					t.Fatalf("proxy Start over a closed descriptor = %v, want EBADF", err)
				}
				if viaDeref {
					uv.UvtMust(t, event.Deref(p).Stop())
				} else {
					uv.UvtMust(t, p.Stop())
				}
				if got := u.Stats().Active; got != base {
					t.Errorf("the poll stopped by its user: %d events active, want %d", got, base)
				}
				if got := uv.UvtPolling(p); got != 0 {
					t.Errorf("the poll stopped by its user: polling for %v, want nothing", got)
				}
				uv.UvtMust(t, p.Close())
				uv.UvtShutdown(t, u, false)
			})
		})
	}
}

// A started proxy keeps being polled for, and told, whatever Stops the
// poll's user makes beyond its own Starts: the Start that started proxies
// hold is theirs. Each way of stopping the poll, then a byte to read: the
// proxy hears Readable.
func TestPollStopLeavesStartedProxies(t *testing.T) {
	stops := []struct {
		name string
		stop func(p *uv.Poll) error
	}{
		{"Stop never started", func(p *uv.Poll) error { return p.Stop() }},
		{"Stop twice", func(p *uv.Poll) error { p.Stop(); return p.Stop() }},
		{"Start then two Stops", func(p *uv.Poll) error {
			if err := p.Start(); err != nil {
				return err
			}
			p.Stop()
			return p.Stop()
		}},
		{"Stop of the event behind the handle", func(p *uv.Poll) error { return event.Deref(p).Stop() }},
		{"Stop as an event.Event", func(p *uv.Poll) error { var ev event.Event = p; return ev.Stop() }},
	}
	for _, s := range stops {
		t.Run(s.name, func(t *testing.T) {
			uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
				a, b := socketpair(t)
				p := newPoll(t, u, a, uv.Readable, uv.PollOptions{})
				x := newProxy(t, p, uv.Readable)
				heard := make(chan uv.PollEvents, 1)
				if _, err := event.Subscribe(x, func(_ event.Event, res any, err error) {
					if errors.Is(err, event.ErrClosed) {
						return // the reactor's Close at the end of the test
					}
					if err != nil {
						t.Errorf("proxy told %v", err)
						return
					}
					select {
					case heard <- res.(uv.PollEvents):
					default:
					}
				}); err != nil {
					t.Fatal(err)
				}
				uv.UvtMust(t, x.Start())
				if err := s.stop(p); err != nil {
					t.Fatalf("the poll's Stop: %v", err)
				}
				if got := uv.UvtPolling(p); got != uv.Readable {
					t.Errorf("after the poll's Stop, polling for %v, want %v", got, uv.Readable)
				}
				if _, err := unix.Write(b, []byte{1}); err != nil {
					t.Fatal(err)
				}
				uv.UvtServe(t, u)
				if got := uv.UvtRecv(t, heard, "proxy notification"); got&uv.Readable == 0 {
					t.Errorf("the proxy heard %v, want Readable", got)
				}
			})
		})
	}
}

// NewPollProxy over a zero Poll (one no constructor made) refuses it with
// an error matching event.ErrNilEvent, as the zero Poll's own methods do,
// instead of dereferencing its missing state.
func TestNewPollProxyRefusesZeroPoll(t *testing.T) {
	x, err := uv.NewPollProxy(new(uv.Poll), uv.Readable)
	if x != nil || !errors.Is(err, event.ErrNilEvent) {
		t.Errorf("NewPollProxy(zero Poll) = %v, %v; want nil and an error matching ErrNilEvent", x, err)
	}
}
