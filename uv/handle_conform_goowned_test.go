package uv_test

import (
	"context"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/uvevent/uvevent/async"
	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
)

// The rows of the Go-owned kinds that no libuv handle stands behind: a
// future (resolved by Fire), a handoff (resolved by Fire, again and
// again), a coroutine (whose function returns when Fire
// opens its gate), a timeout (a timer that fires by itself) and a channel
// receive (which a send completes).

func conformFuture(t *testing.T) conform.Kind {
	return conform.Kind{
		New: func(r *reactor.Reactor) (event.Event, error) {
			// A refused future is born done with the reactor's error.
			f := event.NewFuture[int](r.Owner())
			if _, done, err := f.Outcome(); done {
				return nil, err
			}
			return f, nil
		},
		Fire:    func(ev event.Event) error { return ev.(*event.Future[int]).Resolve(1) },
		Info:    regexp.MustCompile(`^Future\(\w+\)$`),
		OneShot: true,
		NoStart: true,
		Skip: map[string]string{
			// A pending future with subscribers is held by its reactor
			// (reactor's held tests pin it), but nothing can
			// fire it once every reference is dropped: only a holder
			// resolves a future.
			"StartedIsKept": "only the future's holder can resolve it, and the check drops every reference",
		},
	}
}

func conformHandoff(t *testing.T) conform.Kind {
	return conform.Kind{
		New: func(r *reactor.Reactor) (event.Event, error) {
			h, err := event.NewHandoff[int](r)
			if err != nil {
				return nil, err
			}
			return h, nil
		},
		Fire: func(ev event.Event) error { return ev.(*event.Handoff[int]).Resolve(1) },
		Info: regexp.MustCompile(`^Handoff\(empty\)$`),
		// Re-armable: a Resolve notifies and leaves it open, empty.
		NoStart: true,
		Skip: map[string]string{
			// A handoff with subscribers is held by its reactor (as a
			// pending future is), but only a holder of it can resolve it.
			"StartedIsKept": "only the handoff's holder can resolve it, and the check drops every reference",
		},
	}
}

func conformCoroutine(t *testing.T) conform.Kind {
	var gates sync.Map // event.Event → chan struct{}
	detach := func(ev event.Event) func() error {
		g, ok := gates.LoadAndDelete(ev)
		return func() error {
			if ok {
				close(g.(chan struct{}))
			}
			return nil
		}
	}
	return conform.Kind{
		New: func(r *reactor.Reactor) (event.Event, error) {
			gate := make(chan struct{})
			co, err := reactor.Go(context.Background(), r, func(ctx context.Context) (int, error) {
				select {
				case <-gate:
					return 1, nil
				case <-ctx.Done():
					return 0, ctx.Err()
				}
			})
			if err == nil {
				gates.Store(event.Event(co), gate)
			}
			return co, err
		},
		Fire:    func(ev event.Event) error { return detach(ev)() },
		Detach:  detach,
		Info:    regexp.MustCompile(`^Goroutine \d+ spawned at \S+, \w+`),
		OneShot: true,
		NoStart: true,
	}
}

func conformTimeout(t *testing.T) conform.Kind {
	return conform.Kind{
		New:            func(r *reactor.Reactor) (event.Event, error) { return async.NewTimeout(r, time.Millisecond) },
		Info:           regexp.MustCompile(`^Timeout\(1ms\)$`),
		OneShot:        true,
		StopsWhenFired: true,
		// Firing is what a timeout is for: its notification is its error.
		FiresWith: event.ErrTimeout,
	}
}

func conformChannelRecv(t *testing.T) conform.Kind {
	var chans sync.Map // event.Event → *async.Channel[int]
	return conform.Kind{
		New: func(r *reactor.Reactor) (event.Event, error) {
			ch, err := async.NewChannel[int](r, 1)
			if err != nil {
				return nil, err
			}
			op := ch.Recv()
			chans.Store(event.Event(op), ch)
			return op, nil
		},
		Fire: func(ev event.Event) error {
			ch, _ := chans.Load(ev)
			return ch.(*async.Channel[int]).Send(1).Start()
		},
		Detach: func(ev event.Event) func() error {
			ch, _ := chans.Load(ev)
			return func() error { return ch.(*async.Channel[int]).Send(1).Start() }
		},
		Info:    regexp.MustCompile(`^Channel\.Recv\(.*\)$`),
		OneShot: true,
	}
}
