package uv_test

import (
	"context"
	"testing"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// Two cooperative coroutines that hand the baton to each other forever do
// not keep I/O readiness from being served: a trigger sent from another
// goroutine (libuv's backend descriptor on the libuv driver, the poller's
// wake-up on the pure-Go driver) fires while they ping-pong, and only its
// callback stops them. (The deadline only turns a hang into a failure.)
func TestTriggerServedWhileCoroutinesPingPong(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		r := u.Reactor
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		tr, err := uv.NewTrigger(r)
		uv.UvtMust(t, err)
		var fired bool // loop-owned
		var rounds int
		event.Subscribe(tr, func(_ event.Event, _ any, err error) {
			if err == nil {
				fired = true
				tr.Close()
			}
		})
		uv.UvtMust(t, tr.Start())
		inA, inB := event.NewFuture[int](r), event.NewFuture[int](r)
		a, err := reactor.Spawn(ctx, r, func(ctx context.Context) (int, error) {
			for {
				inA = event.NewFuture[int](r)
				if fired {
					inB.Resolve(-1)
					return rounds, nil
				}
				if rounds++; rounds == 100 {
					go tr.Send() // from outside the loop, while they ping-pong
				}
				inB.Resolve(rounds)
				if _, err := inA.Await(ctx); err != nil {
					return rounds, err
				}
			}
		})
		uv.UvtMust(t, err)
		b, err := reactor.Spawn(ctx, r, func(ctx context.Context) (int, error) {
			for {
				v, err := inB.Await(ctx)
				if err != nil || v < 0 {
					return v, err
				}
				inB = event.NewFuture[int](r)
				inA.Resolve(v)
			}
		})
		uv.UvtMust(t, err)
		uv.UvtMust(t, r.Run(ctx))
		if !fired {
			t.Fatal("the trigger did not fire")
		}
		for _, c := range []*reactor.Coroutine[int]{a, b} {
			if _, ok, err := c.Outcome(); !ok || err != nil {
				t.Errorf("%s: outcome %v, %v: it did not stop by itself", c.Info(), ok, err)
			}
		}
	})
}
