package uv_test

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// SetHidden is every kind's uv_unref / Node's unref(): a hidden started
// event does not keep Run going, and still delivers while something else
// keeps the loop turning.

// hideable is what every kind has: the event methods and SetHidden.
type hideable interface {
	event.Event
	SetHidden(hidden bool) error
}

// hiddenKinds makes one event of each kind, not started, on r.
func hiddenKinds(t *testing.T, r *reactor.Reactor) map[string]hideable {
	t.Helper()
	m := map[string]hideable{}
	add := func(name string, ev hideable, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		m[name] = ev
	}
	tm, err := r.NewTimer(time.Hour, 0)
	add("timer", tm, err)
	tr, err := uv.NewTrigger(r)
	add("trigger", tr, err)
	ln, err := uv.Listen(r, "tcp4", "127.0.0.1:0")
	add("listener", ln, err)
	a, b, err := uv.Pipe(r)
	add("io", a, err)
	t.Cleanup(func() { b.Close() })
	u, err := uv.ListenUDP(r, "udp4", "127.0.0.1:0")
	add("udp", u, err)
	f, err := uv.NewFSEvent(r, t.TempDir(), uv.FSEventOptions{})
	add("fsevent", f, err)
	fd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	uv.UvtMust(t, err)
	p, err := uv.NewPoll(r, fd, uv.Readable, uv.PollOptions{CloseFD: true})
	add("poll", p, err)
	ch, err := uv.NewCheck(r)
	add("check", ch, err)
	return m
}

// Started and hidden, no kind keeps Run going; SetHidden(false) makes it
// count again.
func TestHiddenStartedEventsLetRunEnd(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		for name, ev := range hiddenKinds(t, u.Reactor) {
			uv.UvtMust(t, ev.Start())
			if n := u.Stats().Active; n != 1 {
				t.Fatalf("%s: started, Active = %d, want 1", name, n)
			}
			uv.UvtMust(t, ev.SetHidden(true))
			if n := u.Stats().Active; n != 0 {
				t.Fatalf("%s: started and hidden, Active = %d, want 0", name, n)
			}
			if !ev.Flags().Has(event.Hidden) {
				t.Errorf("%s: flags %v lack Hidden", name, ev.Flags())
			}
			ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
			err := u.Run(ctx)
			cancel()
			if err != nil {
				t.Fatalf("%s: Run with only a hidden started event = %v, want nil at once", name, err)
			}
			uv.UvtMust(t, ev.SetHidden(false))
			if n := u.Stats().Active; n != 1 {
				t.Errorf("%s: shown again, Active = %d, want 1", name, n)
			}
			uv.UvtMust(t, ev.Close())
		}
		uv.UvtShutdown(t, u, false)
	})
}

// A hidden started timer, trigger or listener still delivers while a
// visible event keeps Run going; its callback closes that event, and Run
// ends.
func TestHiddenStartedEventStillDelivers(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		for _, name := range []string{"timer", "trigger", "listener"} {
			t.Run(name, func(t *testing.T) {
				keep, err := uv.NewTrigger(u.Reactor) // the visible event
				uv.UvtMust(t, err)
				uv.UvtMust(t, keep.Start())
				var ev hideable
				var fire func() error
				switch name {
				case "timer":
					ev, err = u.Reactor.NewTimer(time.Millisecond, 0)
				case "trigger":
					var tr *uv.Trigger
					tr, err = uv.NewTrigger(u.Reactor)
					ev, fire = tr, tr.Send
				case "listener":
					var ln *uv.Listener
					ln, err = uv.Listen(u.Reactor, "tcp4", "127.0.0.1:0")
					ev = ln
					fire = func() error {
						c, err := net.Dial("tcp4", ln.Addr().String())
						if err == nil {
							t.Cleanup(func() { c.Close() })
						}
						return err
					}
				}
				uv.UvtMust(t, err)
				var fired atomic.Bool
				_, err = event.Subscribe(ev, func(_ event.Event, res any, err error) {
					if errors.Is(err, event.ErrClosed) {
						return
					}
					if c, ok := res.(*uv.IO); ok {
						c.Close()
					}
					fired.Store(true)
					keep.Close()
				})
				uv.UvtMust(t, err)
				uv.UvtMust(t, ev.SetHidden(true))
				uv.UvtMust(t, ev.Start())
				if fire != nil {
					go fire()
				}
				ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
				defer cancel()
				if err := u.Run(ctx); err != nil {
					t.Fatalf("Run = %v", err)
				}
				if !fired.Load() {
					t.Fatal("Run ended before the hidden event delivered")
				}
				uv.UvtMust(t, ev.Close())
			})
		}
		uv.UvtShutdown(t, u, false)
	})
}

// A zero kind refuses SetHidden as it refuses every method.
func TestHiddenZeroKind(t *testing.T) {
	var tr uv.Trigger
	if err := tr.SetHidden(true); !errors.Is(err, event.ErrNilEvent) {
		t.Errorf("SetHidden on the zero Trigger = %v, want ErrNilEvent", err)
	}
}

// A hidden started Poll whose descriptor is always ready (a writable socket)
// does not keep Run going either: its readiness is I/O the loop delivers,
// not work that keeps it alive. Run ends once the visible timer has fired,
// with the poll heard meanwhile.
func TestHiddenAlwaysReadyPollLetsRunEnd(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		uv.UvtMust(t, err)
		defer unix.Close(fds[0])
		defer unix.Close(fds[1])
		p, err := uv.NewPoll(u.Reactor, fds[0], uv.Writable, uv.PollOptions{})
		uv.UvtMust(t, err)
		var heard atomic.Int64
		event.Subscribe(p, func(_ event.Event, _ any, err error) {
			if err == nil {
				heard.Add(1)
			}
		})
		uv.UvtMust(t, p.Start())
		uv.UvtMust(t, p.SetHidden(true))
		tm, err := u.NewTimer(5*time.Millisecond, 0)
		uv.UvtMust(t, err)
		uv.UvtMust(t, tm.Start())
		ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
		err = u.Run(ctx)
		cancel()
		if err != nil {
			t.Fatalf("Run with a hidden always-ready poll and a timer = %v, want nil once the timer fired", err)
		}
		if heard.Load() == 0 {
			t.Error("the hidden poll was never heard while the timer kept Run going")
		}
		uv.UvtMust(t, p.Close())
		uv.UvtShutdown(t, u, false)
	})
}
