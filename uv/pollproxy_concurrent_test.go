package uv_test

import (
	"errors"
	"sync"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/uv"
)

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
