package uv_test

import (
	"errors"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/uv"
)

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
