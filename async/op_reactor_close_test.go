package async_test

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/uvevent/uvevent/async"
	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
)

const closeSafety = 20 * time.Second

// The reactor closes while goroutines wait on a channel's send and receive,
// a pool's acquire, a group's Wait, a suspension and a timeout, with Serve
// running and other goroutines sending, receiving, acquiring and releasing
// flat out. Every wait must end (with an error is fine) without waiting for
// its own context, Close must return, and the pool's resources must be
// destroyed (New's context ended).
func TestReactorCloseEndsAsyncWaits(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		r, err := reactor.New(reactor.Options{Driver: d, OnReport: func(event.Event, string, error) {}})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		ch, err := async.NewChannel[int](r, 0)
		if err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		made, destroyed := 0, 0
		pool, err := async.NewPool(r, async.PoolOptions[int]{
			Max: 2,
			New: func(ctx context.Context) (int, error) {
				mu.Lock()
				made++
				mu.Unlock()
				return 1, nil
			},
			Destroy: func(int) {
				mu.Lock()
				destroyed++
				mu.Unlock()
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		grp, err := async.NewGroup[int](context.Background(), r, async.GroupOptions{})
		if err != nil {
			t.Fatal(err)
		}
		grp.Go(func(ctx context.Context) (int, error) { <-ctx.Done(); return 0, ctx.Err() })
		grp.Spawn(func(ctx context.Context) (int, error) {
			_, err := ch.Recv().Await(ctx)
			return 0, err
		})
		susp, err := async.NewSuspension[int](r)
		if err != nil {
			t.Fatal(err)
		}
		tmo, err := async.NewTimeout(r, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		serveDone := make(chan error, 1)
		go func() { serveDone <- r.Serve(context.Background()) }()

		waits := map[string]func(ctx context.Context) error{
			"send":    func(ctx context.Context) error { _, err := ch.Send(1).Await(ctx); return err },
			"recv":    func(ctx context.Context) error { _, err := ch.Recv().Await(ctx); return err },
			"group":   func(ctx context.Context) error { _, err := grp.Wait(ctx); return err },
			"susp":    func(ctx context.Context) error { _, err := susp.Suspend(ctx); return err },
			"timeout": func(ctx context.Context) error { _, err := event.Await(ctx, event.Any(), tmo); return err },
			"acquire": func(ctx context.Context) error {
				for {
					v, err := pool.Acquire().Await(ctx)
					if err != nil {
						return err
					}
					// hold it: the third acquirer waits
					_ = v
					if ctx.Err() != nil {
						return ctx.Err()
					}
				}
			},
		}
		type res struct {
			name string
			err  error
		}
		results := make(chan res, len(waits)*2)
		for name, w := range waits {
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), closeSafety)
				defer cancel()
				results <- res{name, w(ctx)}
			}()
		}
		stop := make(chan struct{})
		var churn sync.WaitGroup
		for i := 0; i < 3; i++ {
			churn.Add(1)
			go func(i int) {
				defer churn.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
					switch i {
					case 0:
						ch.Send(2).Await(ctx)
					case 1:
						ch.Recv().Await(ctx)
					case 2:
						if v, err := pool.Acquire().Await(ctx); err == nil {
							pool.Release(v)
						}
					}
					cancel()
				}
			}(i)
		}
		time.Sleep(30 * time.Millisecond) // let the waits and the churn start; not a decision
		closed := make(chan error, 1)
		go func() { closed <- r.Close() }()
		select {
		case err := <-closed:
			if err != nil {
				t.Errorf("Close = %v", err)
			}
		case <-time.After(closeSafety):
			buf := make([]byte, 1<<20)
			t.Fatalf("Close hung\n%s", buf[:runtime.Stack(buf, true)])
		}
		for range waits {
			select {
			case r := <-results:
				if errors.Is(r.err, context.DeadlineExceeded) {
					t.Errorf("%s: waited for its own context after the reactor closed", r.name)
				}
			case <-time.After(closeSafety + time.Second):
				t.Fatalf("a wait never ended")
			}
		}
		close(stop)
		done := make(chan struct{})
		go func() { churn.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(closeSafety):
			t.Fatalf("the churning goroutines hung after Close")
		}
		<-serveDone
		mu.Lock()
		defer mu.Unlock()
		t.Logf("pool made %d, destroyed %d", made, destroyed)
		// No goroutine of the reactor may outlive it: a coroutine still
		// parked (or still counted) after Close is a leak. A coroutine
		// whose function has returned is counted out by its goroutine
		// just after: wait for both, within a safety bound.
		deadline := time.Now().Add(closeSafety)
		for {
			buf := make([]byte, 1<<20)
			stacks := string(buf[:runtime.Stack(buf, true)])
			s := r.Stats()
			if !strings.Contains(stacks, "TestReactorCloseEndsAsyncWaits.func1.") && s.Coroutines == 0 && s.Waiting == 0 && s.Timers == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("coroutines outlive the reactor's Close: Stats Coroutines=%d Waiting=%d Timers=%d, want 0; goroutines:\n%s", s.Coroutines, s.Waiting, s.Timers, stacks)
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
}
