package uv_test

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/uv"
)

// TestIPCEndAfterQueuedForCallbackAttack: an IPC started with no callback
// queues the handles that come, then the other end closes the pipe. A
// callback that subscribes then gets the queued handles, in order, and
// then the end (io.EOF), once: the end is not told to nobody, nor before
// the handles that came before it. On either driver.
func TestIPCEndAfterQueuedForCallbackAttack(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
		defer cancel()
		from, to := ipcPair(t, u)
		uv.UvtMust(t, to.Start()) // no callback: what comes waits
		a, b, err := uv.Pipe(u.Reactor)
		uv.UvtMust(t, err)
		const passes = 2
		uv.UvtMust(t, uv.UvtRecv(t, passIOs(ctx, from, a, passes), "the passes"))
		uv.UvtMust(t, from.Close())
		uv.UvtWaitFor(t, "the handles queued and the end", func() bool {
			return uv.UvtIPCQueued(to) == passes && uv.UvtIPCEnded(to)
		})

		type note struct {
			res any
			err error
		}
		notes := make(chan note, 2*passes+2)
		_, err = event.Subscribe(to, func(_ event.Event, res any, err error) {
			notes <- note{res, err}
		})
		uv.UvtMust(t, err)
		for i := range passes {
			n := uv.UvtRecv(t, notes, "a queued handle")
			c, ok := n.res.(*uv.IO)
			if !ok || n.err != nil {
				t.Fatalf("notification %d = %v, %v; want an IO", i, n.res, n.err)
			}
			c.Close()
		}
		select {
		case n := <-notes:
			if n.err != io.EOF {
				t.Errorf("after the handles: %v, %v; want io.EOF", n.res, n.err)
			}
		case <-time.After(2 * time.Second):
			t.Errorf("the callback was never told of the end after the queued handles")
		}
		uv.UvtMust(t, a.Close())
		uv.UvtMust(t, b.Close())
		uv.UvtMust(t, to.Close())
		stop()
		uv.UvtShutdown(t, u, false)
	})
}
