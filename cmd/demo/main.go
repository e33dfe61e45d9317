// Command demo shows the uvevent event model at work: timers one-shot and
// periodic, a future resolved from another goroutine, a wait on any of
// several different events, the Info of live events, a cross-thread trigger,
// and a deadlock the reactor detects and reports. It exits 0.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

func run() error {
	ctx := context.Background()
	quiet := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError + 1}))
	r, err := reactor.New(reactor.Options{Logger: quiet})
	if err != nil {
		return err
	}
	defer r.Close()
	start := time.Now()
	stamp := func() string { return fmt.Sprintf("%3dms", time.Since(start).Milliseconds()/10*10) }

	fmt.Println("1. Timers: one-shot and periodic, and the Info of live events")
	tick, _ := uv.NewTimer(r, 10*time.Millisecond, 10*time.Millisecond)
	once, _ := uv.NewTimer(r, 35*time.Millisecond, 0)
	ticks := 0
	event.Subscribe(tick, func(ev event.Event, _ any, _ error) {
		ticks++
		fmt.Printf("   %s tick %d  %s\n", stamp(), ticks, ev.Info())
		if ticks == 3 {
			ev.Stop()
		}
	})
	event.Subscribe(once, func(ev event.Event, _ any, _ error) {
		fmt.Printf("   %s once fired; closed before its callbacks run: %v\n", stamp(), ev.Flags().Has(event.Closed))
	})
	tick.Start()
	once.Start()
	fmt.Printf("   live: %s; %s; active events: %d\n", tick.Info(), once.Info(), r.Stats().Active)
	if err := r.Run(ctx); err != nil {
		return err
	}

	fmt.Println("2. A future resolved from another goroutine, awaited with others")
	f := event.NewFuture[any](r)
	slow, _ := uv.NewTimer(r, time.Second, 0)
	trig, _ := uv.NewTrigger(r)
	slow.Start()
	trig.Start()
	release, _ := r.Hold() // a goroutine outside the reactor will resolve f
	go func() {
		time.Sleep(20 * time.Millisecond)
		f.Resolve("hello from a goroutine")
		release()
	}()
	co, _ := reactor.Go(r, ctx, func(ctx context.Context) (any, error) {
		outs, err := event.Await(ctx, event.Any(), slow, trig, f)
		if err != nil {
			return nil, err
		}
		o, _ := event.Winner(outs) // outcomes come by position: the winner is the one that succeeded
		fmt.Printf("   %s await-any woke on event #%d, %s: %v\n", stamp(), o.Index, o.Event.Info(), o.Result)
		slow.Close()
		trig.Close()
		return o.Result, nil
	})
	if err := r.Run(ctx); err != nil {
		return err
	}
	v, _, err := co.Outcome()
	fmt.Printf("   coroutine result %q, err %v; a late waiter gets the replay: ", v, err)
	outs, err := event.Await(ctx, event.All(), co)
	if err != nil {
		return err
	}
	fmt.Println(outs[0].Result)

	fmt.Println("3. Deadlock: two coroutines await each other's futures")
	fa, fb := event.NewFuture[any](r), event.NewFuture[any](r)
	a, _ := reactor.Go(r, ctx, func(ctx context.Context) (any, error) {
		_, err := event.Await(ctx, event.Any(), fb)
		fa.Reject(err)
		return nil, err
	})
	b, _ := reactor.Go(r, ctx, func(ctx context.Context) (any, error) {
		_, err := event.Await(ctx, event.Any(), fa)
		fb.Reject(err)
		return nil, err
	})
	if err := r.Run(ctx); err != nil {
		return err
	}
	_, _, errA := a.Outcome()
	_, _, errB := b.Outcome()
	var dl *reactor.DeadlockError
	if !errors.As(errA, &dl) || !errors.Is(errB, event.ErrDeadlock) {
		return fmt.Errorf("expected deadlock errors, got %v and %v", errA, errB)
	}
	fmt.Printf("   each waiter got ErrDeadlock; the report lists %d waiters:\n", len(dl.Waiters))
	for _, w := range dl.Waiters {
		fmt.Printf("     %s waits on %v\n", w.Coroutine, w.Events)
	}

	s := r.Stats()
	fmt.Printf("4. Stats: %d loop turns, %d cgo crossings, C handles live: %d\n", s.Iterations, s.Crossings, s.CHandles)
	return nil
}
