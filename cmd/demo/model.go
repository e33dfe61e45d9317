package main

import (
	"context"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// tourModel: timers with callbacks, the Info of live events, a future
// resolved from another goroutine and awaited beside other events, and the
// replay of a coroutine's stored result.
func tourModel(ctx context.Context, r *reactor.Reactor) error {
	say("timers: a periodic one (10ms) and a one-shot one (35ms), each with a callback")
	tick, err := r.NewTimer(10*time.Millisecond, 10*time.Millisecond)
	if err != nil {
		return err
	}
	once, err := r.NewTimer(35*time.Millisecond, 0)
	if err != nil {
		return err
	}
	ticks := 0
	event.Subscribe(tick, func(ev event.Event, _ any, _ error) {
		ticks++
		say("tick %d  %s", ticks, ev.Info())
		if ticks == 3 {
			ev.Stop()
		}
	})
	event.Subscribe(once, func(ev event.Event, _ any, _ error) {
		say("once fired; a one-shot timer is stopped (not closed) before its callbacks run: %v", event.StateOf(ev) == event.Fired && !ev.Flags().Has(event.Closed))
	})
	tick.Start()
	once.Start()
	say("live: %s; %s; active events: %d", tick.Info(), once.Info(), r.Stats().Active)
	if err := r.Run(ctx); err != nil {
		return err
	}
	say("Run returned: nothing active is left")

	say("a future resolved by a goroutine, awaited with a timer and a trigger (await any)")
	f := event.NewFuture[any](r)
	slow, _ := r.NewTimer(time.Second, 0)
	trig, _ := uv.NewTrigger(r)
	slow.Start()
	trig.Start()
	release, _ := r.Hold() // a goroutine outside the reactor will resolve f
	go func() {
		time.Sleep(20 * time.Millisecond)
		f.Resolve("hello from a goroutine")
		release()
	}()
	co, err := reactor.Go(ctx, r, func(ctx context.Context) (any, error) {
		outs, err := event.Await(ctx, event.Any(), slow, trig, f)
		if err != nil {
			return nil, err
		}
		o, _ := event.Winner(outs)
		say("await-any woke on event #%d, %s: %v", o.Index, o.Event.Info(), o.Result)
		slow.Close()
		trig.Close()
		return o.Result, nil
	})
	if err != nil {
		return err
	}
	if err := r.Run(ctx); err != nil {
		return err
	}
	v, _, err := co.Outcome()
	say("the coroutine's result %q (err %v)", v, err)
	outs, err := event.Await(ctx, event.All(), co)
	if err != nil {
		return err
	}
	say("a waiter that comes later gets the stored result (replay): %v", outs[0].Result)
	return nil
}
