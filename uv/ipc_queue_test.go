package uv_test

import (
	"context"
	"errors"
	"testing"

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
		sent := make(chan error, 1)
		go func() {
			for i := range passes {
				if err := from.SendIO(ctx, a); err != nil {
					sent <- errors.Join(err, errors.New("pass "+itoa(i)))
					return
				}
			}
			sent <- nil
		}()
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
