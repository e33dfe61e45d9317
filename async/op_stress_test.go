package async_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/uvevent/uvevent/async"
	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
)

// A pipeline of cooperative coroutines joined by channels of mixed
// capacities, with parallel producers and timeouts racing the receives:
// every value arrives once, and loop-owned counters need no lock.
func TestPipelineStress(t *testing.T) {
	r, rep := newReactor(t)
	ctx := testCtx(t)
	const stages, producers, each = 6, 4, 200
	chans := make([]*async.Channel[int], stages+1)
	for i := range chans {
		chans[i], _ = async.NewChannel[int](r, i%3) // capacities 0, 1, 2
	}
	g, _ := async.NewGroup[int](ctx, r, async.GroupOptions{CancelOnError: true})
	for p := range producers {
		g.Go(func(ctx context.Context) (int, error) {
			for i := range each {
				if _, err := chans[0].Send(p*each + i).Await(ctx); err != nil {
					return 0, err
				}
			}
			return 0, nil
		})
	}
	timeouts := 0 // loop-owned
	for s := range stages {
		in, out := chans[s], chans[s+1]
		g.Spawn(func(ctx context.Context) (int, error) {
			rng := rand.New(rand.NewPCG(uint64(s), 1))
			n := 0
			for n < producers*each {
				recv := in.Recv()
				evs := []event.Event{recv}
				if rng.IntN(4) == 0 { // race the receive against a short timeout
					to, _ := async.NewTimeout(r, time.Duration(rng.IntN(2)+1)*time.Millisecond)
					evs = append(evs, to)
				}
				outs, err := event.Await(ctx, event.Any(), evs...)
				if errors.Is(err, event.ErrTimeout) {
					timeouts++
					continue // the receive left the line: nothing is lost
				}
				if err != nil {
					return n, err
				}
				v, _ := event.ValueOf[int](outs[0])
				if _, err := out.Send(v + 1).Await(ctx); err != nil {
					return n, err
				}
				n++
			}
			return n, nil
		})
	}
	sum := 0
	sink, _ := g.Spawn(func(ctx context.Context) (int, error) {
		for range producers * each {
			v, err := chans[stages].Recv().Await(ctx)
			if err != nil {
				return 0, err
			}
			sum += v
		}
		return 0, nil
	})
	if err := r.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Wait(ctx); err != nil {
		t.Fatalf("pipeline: %v (sink %s)", err, sink.Info())
	}
	n := producers * each
	if want := n*(n-1)/2 + n*stages; sum != want {
		t.Errorf("sum %d, want %d (%d receives timed out)", sum, want, timeouts)
	}
	if msgs := rep.snapshot(); len(msgs) != 0 {
		t.Errorf("reports %v", msgs)
	}
}

// Close in the middle of a busy run: coroutines ready, parked and running
// all end, nothing hangs, nothing is left.
func TestCloseMidFlight(t *testing.T) {
	for range 20 {
		r, err := reactor.New(reactor.Options{OnReport: func(event.Event, string, error) {}})
		if err != nil {
			t.Fatal(err)
		}
		ch, _ := async.NewChannel[int](r, 1)
		var cs []*reactor.Coroutine[int]
		for i := range 10 {
			c, _ := reactor.Spawn(context.Background(), r, func(ctx context.Context) (int, error) {
				for {
					if i%2 == 0 {
						if _, err := ch.Send(i).Await(ctx); err != nil {
							return 0, err
						}
					} else if _, err := ch.Recv().Await(ctx); err != nil {
						return 0, err
					}
				}
			})
			cs = append(cs, c)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
		r.Serve(ctx)
		cancel()
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		for _, c := range cs {
			if _, err := c.Await(testCtx(t)); err == nil {
				t.Fatalf("%s ended without an error after Close", c.Info())
			}
		}
		// Stats after Close are the figures of Close's last turn: the
		// coroutines were still live then (Close cancels them; they end
		// after it), but no timer or wait is left.
		if s := r.Stats(); s.Timers != 0 || s.Waiting > s.Coroutines {
			t.Fatalf("left after Close: %+v", s)
		}
	}
}
