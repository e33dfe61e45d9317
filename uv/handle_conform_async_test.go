package uv_test

import (
	"context"
	"regexp"
	"sync"
	"testing"

	"github.com/uvevent/uvevent/async"
	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
)

// The rows of package async's kinds. A channel's send and a pool's acquire
// are events (Ops). A Group, a Scope and a Suspension are not: their rows
// run the event a program gets from them and waits on, a coroutine the
// group or scope runs, and a goroutine suspended on the suspension.

// coroutineInfo matches a coroutine's Info (see reactor.Coroutine.Info).
var coroutineInfo = regexp.MustCompile(`^Goroutine \d+ spawned at \S+, \w+`)

// waitGate is a coroutine's function: it returns 1 once gate is closed
// (by openGate, or what detachGate returns: see gates), or its context's
// error.
func waitGate(gate chan struct{}) func(ctx context.Context) (int, error) {
	return func(ctx context.Context) (int, error) {
		select {
		case <-gate:
			return 1, nil
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
}

func conformGroup(t *testing.T) conform.Kind {
	return gatedCoroutineKind(func(r *reactor.Reactor, fn func(context.Context) (int, error)) (*reactor.Coroutine[int], error) {
		grp, err := async.NewGroup[int](context.Background(), r, async.GroupOptions{})
		if err != nil {
			return nil, err
		}
		return grp.Go(fn)
	})
}

func conformScope(t *testing.T) conform.Kind {
	return gatedCoroutineKind(func(r *reactor.Reactor, fn func(context.Context) (int, error)) (*reactor.Coroutine[int], error) {
		s, err := async.NewScope(context.Background(), r)
		if err != nil {
			return nil, err
		}
		return async.Go(s, fn)
	})
}

// gatedCoroutineKind is the row of a coroutine that spawn starts on r (in a
// group, a scope) running fn, fired by opening its gate.
func gatedCoroutineKind(spawn func(r *reactor.Reactor, fn func(context.Context) (int, error)) (*reactor.Coroutine[int], error)) conform.Kind {
	return conform.Kind{
		New: func(r *reactor.Reactor) (event.Event, error) {
			gate := make(chan struct{})
			c, err := spawn(r, waitGate(gate))
			if err != nil {
				return nil, err
			}
			gates.Store(event.Event(c), gate)
			return c, nil
		},
		Fire:    openGate,
		Detach:  detachGate,
		Info:    coroutineInfo,
		OneShot: true,
		NoStart: true,
	}
}

func conformSuspension(t *testing.T) conform.Kind {
	// The resume comes from the test's goroutine, which the reactor cannot
	// see: each suspension's reactor is held (Reactor.Hold) until it is
	// resumed, or the deadlock check could end the wait first.
	type suspended struct {
		s       *async.Suspension[int]
		release func()
	}
	var susps sync.Map // event.Event → suspended
	resume := func(v any, ok bool) func() error {
		return func() error {
			if !ok {
				return nil
			}
			sp := v.(suspended)
			defer sp.release()
			return sp.s.Resume(1)
		}
	}
	return conform.Kind{
		New: func(r *reactor.Reactor) (event.Event, error) {
			s, err := async.NewSuspension[int](r)
			if err != nil {
				return nil, err
			}
			release, err := r.Hold()
			if err != nil {
				return nil, err
			}
			c, err := reactor.Go(context.Background(), r, s.Suspend)
			if err != nil {
				release()
				return nil, err
			}
			susps.Store(event.Event(c), suspended{s, release})
			return c, nil
		},
		Fire: func(ev event.Event) error { return resume(susps.LoadAndDelete(ev))() },
		Detach: func(ev event.Event) func() error {
			return resume(susps.LoadAndDelete(ev))
		},
		Info:    coroutineInfo,
		OneShot: true,
		NoStart: true,
	}
}

func conformChannelSend(t *testing.T) conform.Kind {
	var chans sync.Map // event.Event → *async.Channel[int]
	recv := func(ch any, ok bool) func() error {
		return func() error {
			if !ok {
				return nil
			}
			return ch.(*async.Channel[int]).Recv().Start()
		}
	}
	return conform.Kind{
		New: func(r *reactor.Reactor) (event.Event, error) {
			ch, err := async.NewChannel[int](r, 0) // unbuffered: a send waits for a receiver
			if err != nil {
				return nil, err
			}
			op := ch.Send(1)
			chans.Store(event.Event(op), ch)
			return op, nil
		},
		Fire:    func(ev event.Event) error { return recv(chans.LoadAndDelete(ev))() },
		Detach:  func(ev event.Event) func() error { return recv(chans.LoadAndDelete(ev)) },
		Info:    regexp.MustCompile(`^Channel\.Send\(.*\)$`),
		OneShot: true,
	}
}

func conformPoolAcquire(t *testing.T) conform.Kind {
	return conform.Kind{
		New: func(r *reactor.Reactor) (event.Event, error) {
			gate := make(chan struct{})
			p, err := async.NewPool(r, async.PoolOptions[int]{Max: 1, New: waitGate(gate)})
			if err != nil {
				return nil, err
			}
			op := p.Acquire() // completes once the pool has made its resource
			gates.Store(event.Event(op), gate)
			return op, nil
		},
		Fire:    openGate,
		Detach:  detachGate,
		Info:    regexp.MustCompile(`^Pool\.Acquire\(size=\d+/1, idle=\d+, waiting=\d+\)$`),
		OneShot: true,
	}
}
