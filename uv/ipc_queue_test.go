package uv_test

import (
	"context"
	"errors"
	"testing"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/uv"
)

// TestIPCQueueBounded: handles passed to an IPC started with no callback
// to receive them wait for Receive, none dropped; and while nobody
// receives, at most the queue's bound of them wait in the IPC (plus those
// of the read that reached it), the rest in the socket, the sender's
// passes waiting for room, until a Receive takes from the full queue. Then
// every handle passed is received, on either driver, and nothing leaks.
func TestIPCQueueBounded(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
		defer cancel()
		from, to := ipcPair(t, u)
		uv.UvtMust(t, to.Start()) // no callback: what comes waits for Receive

		a, b, err := uv.Pipe(u.Reactor)
		uv.UvtMust(t, err)
		// One pass first: what the netpoller and the loop make at their
		// first use is then in both counts of descriptors.
		uv.UvtMust(t, from.SendIO(ctx, a))
		got, err := to.Receive(ctx)
		uv.UvtMust(t, err)
		uv.UvtMust(t, got.Close())
		before := fdNames()

		passes := 4 * uv.UvtIPCQueueLimit
		sent := passIOs(ctx, from, a, passes)
		// Nobody receives: the IPC takes handles until its queue is full,
		// then stops reading.
		uv.UvtWaitFor(t, "the IPC's queue to fill", func() bool { return uv.UvtIPCStalled(to) })
		if n, limit := uv.UvtIPCQueued(to), uv.UvtIPCQueueLimit+uv.UvtIPCReadBatch; n > limit {
			t.Errorf("%d handles queued with nobody receiving, want at most %d", n, limit)
		}
		for i := range passes {
			got, err := to.Receive(ctx)
			if err != nil || got.IO == nil {
				t.Fatalf("Receive %d of %d = %+v, %v; want an IO", i, passes, got, err)
			}
			got.Close()
		}
		uv.UvtMust(t, uv.UvtRecv(t, sent, "the passes"))
		if n := uv.UvtIPCQueued(to); n != 0 {
			t.Errorf("%d handles queued after every pass was received", n)
		}
		waitFDs(t, before) // every handle received is closed
		uv.UvtMust(t, a.Close())
		uv.UvtMust(t, b.Close())
		uv.UvtMust(t, from.Close())
		uv.UvtMust(t, to.Close())
		stop()
		uv.UvtShutdown(t, u, false)
	})
}

// TestIPCStalledCallbackTakesTheQueue: an IPC started with no callback
// whose queue for Receive filled (it stopped reading) reads again once a
// callback subscribes: the callback gets the handles queued, oldest first,
// and every one after them; none waits for a Receive nobody makes, none
// is lost. On either driver.
func TestIPCStalledCallbackTakesTheQueue(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
		defer cancel()
		from, to := ipcPair(t, u)
		uv.UvtMust(t, to.Start()) // no callback: what comes waits
		a, b, err := uv.Pipe(u.Reactor)
		uv.UvtMust(t, err)
		passes := 3 * uv.UvtIPCQueueLimit
		sent := passIOs(ctx, from, a, passes)
		uv.UvtWaitFor(t, "the IPC's queue to fill", func() bool { return uv.UvtIPCStalled(to) })
		got := make(chan *uv.IO, passes)
		_, err = event.Subscribe(to, func(_ event.Event, res any, _ error) {
			if c, ok := res.(*uv.IO); ok {
				got <- c
			}
		})
		uv.UvtMust(t, err)
		for range passes {
			uv.UvtRecv(t, got, "the handles for the callback").Close()
		}
		uv.UvtMust(t, uv.UvtRecv(t, sent, "the passes"))
		if n := uv.UvtIPCQueued(to); n != 0 {
			t.Errorf("%d handles left queued with a callback subscribed", n)
		}
		for _, x := range []interface{ Close() error }{a, b, from, to} {
			uv.UvtMust(t, x.Close())
		}
		stop()
		uv.UvtShutdown(t, u, false)
	})
}

// passIOs passes c n times over from, from a goroutine, and tells on the
// channel returned how that ended.
func passIOs(ctx context.Context, from *uv.IPC, c *uv.IO, n int) <-chan error {
	sent := make(chan error, 1)
	go func() {
		for i := range n {
			if err := from.SendIO(ctx, c); err != nil {
				sent <- errors.Join(err, errors.New("pass "+itoa(i)))
				return
			}
		}
		sent <- nil
	}()
	return sent
}
