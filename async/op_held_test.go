package async_test

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/uvevent/uvevent/async"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
)

// An Op waiting in line is its reactor's (the reactor's Close must end
// it), and only while it waits: one stopped, one completed by a receiver
// and one acquired from a pool are the collector's again once dropped,
// with the channel and the pool they reached, while the reactor lives on.
func TestOpLetGoOnceOutOfLine(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		r := quietReactor(t, d)
		var collected atomic.Int32
		want := int32(0)
		track := func(p any) {
			switch p := p.(type) {
			case *async.Op[int]:
				runtime.AddCleanup(p, func(c *atomic.Int32) { c.Add(1) }, &collected)
			case *async.Channel[int]:
				runtime.AddCleanup(p, func(c *atomic.Int32) { c.Add(1) }, &collected)
			case *async.Pool[int]:
				runtime.AddCleanup(p, func(c *atomic.Int32) { c.Add(1) }, &collected)
			}
			want++
		}
		// A send in line, then stopped.
		func() {
			ch, err := async.NewChannel[int](r, 0)
			if err != nil {
				t.Fatal(err)
			}
			op := ch.Send(1)
			track(ch)
			track(op)
			if err := op.Start(); err != nil {
				t.Fatal(err)
			}
			if err := op.Stop(); err != nil {
				t.Fatal(err)
			}
		}()
		// A receive in line, completed by a send.
		func() {
			ch, err := async.NewChannel[int](r, 0)
			if err != nil {
				t.Fatal(err)
			}
			recv, send := ch.Recv(), ch.Send(2)
			track(ch)
			track(recv)
			track(send)
			if err := recv.Start(); err != nil {
				t.Fatal(err)
			}
			if err := send.Start(); err != nil {
				t.Fatal(err)
			}
			if v, ok, err := recv.Outcome(); !ok || err != nil || v != 2 {
				t.Fatalf("the receive's outcome: %v, %v, %v; want 2", v, ok, err)
			}
		}()
		// An acquire waiting for a release, then served.
		func() {
			p, err := async.NewPool(r, async.PoolOptions[int]{Max: 1, New: func(context.Context) (int, error) { return 3, nil }})
			if err != nil {
				t.Fatal(err)
			}
			track(p)
			ctx, stop := serve(t, r)
			defer stop()
			v, err := p.Acquire().Await(ctx)
			if err != nil {
				t.Fatal(err)
			}
			waiting := p.Acquire()
			track(waiting)
			if err := waiting.Start(); err != nil {
				t.Fatal(err)
			}
			if err := p.Release(v); err != nil {
				t.Fatal(err)
			}
			if _, err := waiting.Await(ctx); err != nil {
				t.Fatal(err)
			}
		}()
		collectUntil(t, r, func() bool { return collected.Load() == want }, func() string {
			return fmt.Sprintf("%d of the %d dropped channels, pools and operations were collected", collected.Load(), want)
		})
	})
}
