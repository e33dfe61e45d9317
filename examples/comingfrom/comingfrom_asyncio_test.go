package comingfrom_test

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/uvevent/uvevent/async"
	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/loop"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// TestAsyncio runs the rows and the code block of "From asyncio (Python)",
// and the claims of "What has no counterpart".
func TestAsyncio(t *testing.T) {
	row(t, "asyncio.run", func(t *testing.T, r *reactor.Reactor) {
		ctx := bounded(t)
		main := func(ctx context.Context) (string, error) { return "main", nil }
		co, _ := reactor.Spawn(ctx, r, main)
		r.Run(ctx)
		if v, ok, err := co.Outcome(); v != "main" || !ok || err != nil {
			t.Fatalf("Outcome = %q, %v, %v; want main", v, ok, err)
		}
	})
	row(t, "create_task", func(t *testing.T, r *reactor.Reactor) {
		ctx := bounded(t)
		var order []string // loop-owned: tasks run one at a time
		task := func(name string) func(context.Context) (struct{}, error) {
			return func(ctx context.Context) (struct{}, error) {
				for range 2 {
					order = append(order, name)
					tm, _ := r.NewTimer(0, 0)
					if _, err := event.Await(ctx, event.Any(), tm); err != nil {
						return struct{}{}, err
					}
				}
				return struct{}{}, nil
			}
		}
		reactor.Spawn(ctx, r, task("a"))
		reactor.Spawn(ctx, r, task("b"))
		par, _ := reactor.Go(ctx, r, func(context.Context) (int, error) { return 1, nil })
		run(t, r)
		if len(order) != 4 {
			t.Fatalf("order %v, want each task twice", order)
		}
		if _, ok, _ := par.Outcome(); !ok {
			t.Fatal("the parallel task did not finish")
		}
	})
	row(t, "sleep", func(t *testing.T, r *reactor.Reactor) {
		_, err := coRun(t, r, func(ctx context.Context) ([]event.Outcome, error) {
			t, _ := r.NewTimer(time.Millisecond, 0)
			return event.Await(ctx, event.Any(), t)
		})
		must(t, err)
	})
	row(t, "gather", func(t *testing.T, r *reactor.Reactor) {
		a, b := event.NewFuture[int](r), event.NewFuture[int](r)
		elsewhere(t, r, func() { b.Resolve(2); a.Resolve(1) })
		vs, err := coRun(t, r, func(ctx context.Context) ([]int, error) { return event.AwaitAll(ctx, a, b) })
		if !cmp.Equal([]int{1, 2}, vs) || err != nil {
			t.Fatalf("AwaitAll = %v, %v; want [1 2]", vs, err)
		}
		vs, err = coRun(t, r, func(ctx context.Context) ([]int, error) {
			g, _ := async.NewGroup[int](ctx, r, async.GroupOptions{})
			g.Go(func(context.Context) (int, error) { return 1, nil })
			g.Go(func(context.Context) (int, error) { return 2, nil })
			return g.Wait(ctx)
		})
		if !cmp.Equal([]int{1, 2}, vs) || err != nil {
			t.Fatalf("Group = %v, %v; want [1 2]", vs, err)
		}
	})
	row(t, "gather return_exceptions", func(t *testing.T, r *reactor.Reactor) {
		a, b := event.NewFuture[int](r), event.NewFuture[int](r)
		boom := errors.New("boom")
		elsewhere(t, r, func() { a.Reject(boom); b.Resolve(2) })
		var errs []error
		vs, err := coRun(t, r, func(ctx context.Context) ([]int, error) {
			vs, e, err := event.AwaitAllSettled(ctx, a, b)
			errs = e
			return vs, err
		})
		if err != nil || !cmp.Equal([]int{0, 2}, vs) || !errors.Is(errs[0], boom) || errs[1] != nil {
			t.Fatalf("AwaitAllSettled = %v, %v, %v; want [0 2], [boom nil]", vs, errs, err)
		}
	})
	row(t, "wait FIRST_COMPLETED", func(t *testing.T, r *reactor.Reactor) {
		slow, _ := r.NewTimer(time.Hour, 0)
		fast, _ := r.NewTimer(time.Millisecond, 0)
		evs := []event.Event{slow, fast}
		outs, err := coRun(t, r, func(ctx context.Context) ([]event.Outcome, error) {
			return event.Await(ctx, event.Any(), evs...)
		})
		if err != nil || outs[0].Done || !outs[1].Done {
			t.Fatalf("Await(Any) = %+v, %v; want the fast timer only", outs, err)
		}
		slow.Close()
	})
	row(t, "wait_for", func(t *testing.T, r *reactor.Reactor) {
		timesOut(t, r)
	})
	row(t, "TaskGroup", func(t *testing.T, r *reactor.Reactor) {
		boom := errors.New("boom")
		cancelled := false
		_, err := coRun(t, r, func(ctx context.Context) ([]int, error) {
			g, _ := async.NewGroup[int](ctx, r, async.GroupOptions{CancelOnError: true})
			g.Go(func(ctx context.Context) (int, error) {
				<-ctx.Done() // a sibling's failure cancels it
				cancelled = true
				return 0, ctx.Err()
			})
			g.Go(func(context.Context) (int, error) { return 0, boom })
			return g.Wait(ctx)
		})
		if !errors.Is(err, boom) || !cancelled {
			t.Fatalf("Wait = %v, sibling cancelled: %v; want boom, true", err, cancelled)
		}
	})
	row(t, "Queue", func(t *testing.T, r *reactor.Reactor) {
		ch, err := async.NewChannel[int](r, 1)
		must(t, err)
		v, err := coRun(t, r, func(ctx context.Context) (int, error) {
			if _, err := ch.Send(7).Await(ctx); err != nil {
				return 0, err
			}
			return ch.Recv().Await(ctx)
		})
		if v != 7 || err != nil {
			t.Fatalf("Recv = %d, %v; want 7", v, err)
		}
		// A receive and a timer in one wait: the empty channel loses.
		outs, err := coRun(t, r, func(ctx context.Context) ([]event.Outcome, error) {
			tm, _ := r.NewTimer(time.Millisecond, 0)
			return event.Await(ctx, event.Any(), ch.Recv(), tm)
		})
		if err != nil || outs[0].Done || !outs[1].Done {
			t.Fatalf("Await(Any, Recv, timer) = %+v, %v; want the timer", outs, err)
		}
	})
	row(t, "Semaphore", func(t *testing.T, r *reactor.Reactor) {
		made := 0
		pool, err := async.NewPool(r, async.PoolOptions[int]{Max: 1, New: func(context.Context) (int, error) {
			made++
			return made, nil
		}})
		must(t, err)
		defer pool.Close()
		got, err := coRun(t, r, func(ctx context.Context) ([]int, error) {
			a, err := pool.Acquire().Await(ctx)
			if err != nil {
				return nil, err
			}
			second := pool.Acquire() // waits: Max is 1
			outs, err := event.Await(ctx, event.Any().Within(5*time.Millisecond), second)
			if !errors.Is(err, event.ErrTimeout) {
				return nil, errors.Join(errors.New("a second acquire got through"), err)
			}
			_ = outs
			pool.Release(a)
			b, err := pool.Acquire().Await(ctx)
			return []int{a, b}, err
		})
		if err != nil || !cmp.Equal([]int{1, 1}, got) {
			t.Fatalf("acquired %v, %v; want the one resource twice", got, err)
		}
	})
	row(t, "Future", func(t *testing.T, r *reactor.Reactor) {
		f := event.NewFuture[string](r)
		elsewhere(t, r, func() { f.Resolve("result") })
		v, err := coRun(t, r, func(ctx context.Context) (string, error) { return f.Await(ctx) })
		if v != "result" || err != nil {
			t.Fatalf("Await = %q, %v", v, err)
		}
	})
	loopRow(t, "call_later, call_soon", func(t *testing.T, l *loop.Loop) {
		var order []string
		l.Delay(2*time.Millisecond, func() { order = append(order, "later") })
		l.Delay(0, func() { order = append(order, "soon") })
		runLoop(t, l)
		if !cmp.Equal([]string{"soon", "later"}, order) {
			t.Fatalf("order %v, want soon, later", order)
		}
	})
	loopRow(t, "add_reader", func(t *testing.T, l *loop.Loop) {
		fd, peer := socketPair(t, true)
		var got []byte
		must(t, l.OnReadable(fd, func(fd int) {
			b := make([]byte, 16)
			n, _ := syscall.Read(fd, b)
			got = append(got, b[:max(n, 0)]...)
			if !l.OffReadable(fd) {
				t.Error("OffReadable = false for a watched fd")
			}
		}))
		peer.Write([]byte("data"))
		runLoop(t, l)
		if string(got) != "data" {
			t.Fatalf("read %q, want data", got)
		}
	})
	loopRow(t, "add_signal_handler", func(t *testing.T, l *loop.Loop) {
		var got syscall.Signal
		must(t, l.OnSignal(syscall.SIGUSR1, func(sig syscall.Signal) { got = sig; l.OffSignal(sig) }, loop.SignalOptions{}))
		kill(t, syscall.SIGUSR1)
		runLoop(t, l)
		if got != syscall.SIGUSR1 {
			t.Fatalf("handler got %v, want SIGUSR1", got)
		}
	})
	row(t, "run_in_executor", func(t *testing.T, r *reactor.Reactor) {
		task, err := uv.QueueTask(r, func(context.Context) (int, error) { return 3, nil })
		must(t, err)
		v, err := coRun(t, r, func(ctx context.Context) (int, error) { return task.Await(ctx) })
		if v != 3 || err != nil {
			t.Fatalf("task = %d, %v; want 3", v, err)
		}
	})
	row(t, "task.cancel", func(t *testing.T, r *reactor.Reactor) {
		ctx := bounded(t)
		keep, _ := r.NewTimer(time.Hour, 0) // something under way meanwhile
		co, _ := reactor.Go(ctx, r, func(ctx context.Context) (int, error) {
			_, err := event.Await(ctx, event.Any(), keep)
			return 0, err
		})
		event.On(co, func(int, error) { keep.Close() })
		go co.Cancel()
		run(t, r)
		if _, _, err := co.Outcome(); !errors.Is(err, context.Canceled) {
			t.Fatalf("Outcome after Cancel = %v, want context.Canceled", err)
		}
	})
	t.Run("never retrieved", func(t *testing.T) {
		eachDriver(t, func(t *testing.T, d reactor.Driver) {
			rep := &reports{}
			r := newReactor(t, reactor.Options{Driver: d, OnReport: rep.add})
			ctx := bounded(t)
			failed, _ := reactor.Go(ctx, r, func(context.Context) (int, error) { return 0, errors.New("lost") })
			unused, _ := reactor.Go(ctx, r, func(context.Context) (int, error) { return 1, nil })
			waiter, _ := reactor.Go(ctx, r, func(ctx context.Context) (int, error) {
				return event.NewFuture[int](r).Await(ctx) // for ever
			})
			run(t, r)
			failed.Dispose()
			unused.Dispose()
			_, _, err := waiter.Outcome()
			var dl *reactor.DeadlockError
			if !errors.Is(err, event.ErrDeadlock) || !errors.As(err, &dl) || len(dl.Waiters) != 1 {
				t.Fatalf("a coroutine waiting for ever got %v, want ErrDeadlock with one waiter", err)
			}
			want := []string{"unhandled error", "result never used"}
			var got []string
			for _, m := range rep.msgs {
				if m != "deadlock" {
					got = append(got, m)
				}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("reports (-want +got):\n%s", diff)
			}
		})
	})
	row(t, "code block", func(t *testing.T, r *reactor.Reactor) {
		ctx := bounded(t)
		hosts := []string{"a", "b", "c"}
		fetch := func(ctx context.Context, host string) (string, error) { return "page of " + host, nil }
		co, _ := reactor.Spawn(ctx, r, func(ctx context.Context) ([]string, error) {
			g, _ := async.NewGroup[string](ctx, r, async.GroupOptions{CancelOnError: true})
			for _, host := range hosts {
				g.Go(func(ctx context.Context) (string, error) { return fetch(ctx, host) })
			}
			return g.Wait(ctx) // gather
		})
		r.Run(ctx)
		pages, _, err := co.Outcome()
		if diff := cmp.Diff([]string{"page of a", "page of b", "page of c"}, pages); diff != "" || err != nil {
			t.Fatalf("gather = %v (-want +got):\n%s", err, diff)
		}
	})
	row(t, "replay", func(t *testing.T, r *reactor.Reactor) {
		f := event.NewFuture[int](r)
		f.Resolve(9)
		got := 0
		event.On(f, func(v int, err error) { got = v }) // after completion
		run(t, r)
		if got != 9 {
			t.Fatalf("a late subscriber got %d, want the stored 9", got)
		}
	})
}
