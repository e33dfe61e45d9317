package uv_test

import (
	"context"
	"net"
	"sync/atomic"
	"testing"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/uv"
)

// TestListenerStartedByEarlierRecord: a turn delivers many records, and
// the callback of the first one starts listeners that each have a
// connection waiting. Starting one takes its connection at once, a record
// for the next turn, and the records of this turn still to dispatch must
// not move: every trigger of the turn fires once, and every listener gets
// its connection.
func TestListenerStartedByEarlierRecord(t *testing.T) {
	const nTriggers, nListeners = 60, 8
	eachDriverCounted(t, func(t *testing.T, u *uv.UvtReactor, base, fds int) {
		stop := uv.UvtServe(t, u)
		var lns []*uv.Listener
		var peers []net.Conn
		var accepted atomic.Int32
		for range nListeners {
			ln, err := uv.Listen(u.Reactor, "tcp4", "127.0.0.1:0")
			uv.UvtMust(t, err)
			event.Subscribe(ln, func(_ event.Event, res any, err error) {
				if c, ok := res.(*uv.IO); ok && err == nil {
					accepted.Add(1)
					c.Close()
				}
			})
			lns = append(lns, ln)
			c, err := net.Dial("tcp4", ln.Addr().String()) // in the backlog once Dial returns
			uv.UvtMust(t, err)
			peers = append(peers, c)
		}
		var trs []*uv.Trigger
		fired := make([]int, nTriggers)
		started := false
		for i := range nTriggers {
			tr, err := uv.NewTrigger(u.Reactor)
			uv.UvtMust(t, err)
			event.Subscribe(tr, func(_ event.Event, _ any, err error) {
				if err != nil {
					return
				}
				fired[i]++
				if started {
					return
				}
				started = true
				for _, ln := range lns {
					uv.UvtMust(t, ln.Start())
				}
			})
			uv.UvtMust(t, tr.Start())
			trs = append(trs, tr)
		}
		stop()
		// A turn sees each listener's connection waiting: stopped, it
		// leaves it pending.
		uv.UvtMust(t, u.RunNoWait(context.Background()))
		u.Call(func() {
			for _, tr := range trs {
				uv.UvtMust(t, tr.Send())
			}
		})
		uv.UvtMust(t, u.RunOnce(context.Background()))
		for i, n := range fired {
			if n != 1 {
				t.Errorf("trigger %d fired %d times in the turn, want 1", i, n)
			}
		}
		stop = uv.UvtServe(t, u)
		uv.UvtWaitFor(t, "every listener's connection", func() bool { return accepted.Load() == nListeners })
		for _, tr := range trs {
			tr.Close()
		}
		for i, ln := range lns {
			ln.Close()
			peers[i].Close()
		}
		stop()
		uv.UvtShutdown(t, u, false)
		uv.UvtNoLeaks(t, base, fds)
	})
}
