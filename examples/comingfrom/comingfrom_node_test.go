package comingfrom_test

import (
	"context"
	"errors"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/loop"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// TestNode runs the rows of "From Node" about timers, promises, reports and
// signals; comingfrom_node_io_test.go has processes, watches and sockets.
func TestNode(t *testing.T) {
	loopRow(t, "setTimeout", func(t *testing.T, l *loop.Loop) {
		fired := 0
		id, _ := l.Delay(5*time.Millisecond, func() { fired++ })
		if l.TimerCount() != 1 {
			t.Fatalf("TimerCount = %d, want 1", l.TimerCount())
		}
		runLoop(t, l)
		if fired != 1 || l.TimerCount() != 0 || l.OffDelay(id) {
			t.Fatalf("fired %d times, TimerCount %d; want once, 0, and OffDelay false after it fired", fired, l.TimerCount())
		}
	})
	loopRow(t, "clearTimeout", func(t *testing.T, l *loop.Loop) {
		fired := false
		id, _ := l.Delay(time.Hour, func() { fired = true })
		if !l.OffDelay(id) {
			t.Fatal("OffDelay of a pending timer = false, want true")
		}
		if l.OffDelay(id) {
			t.Fatal("OffDelay a second time = true, want false")
		}
		runLoop(t, l) // nothing left: returns at once
		if fired {
			t.Fatal("a removed timer fired")
		}
	})
	loopRow(t, "setInterval", func(t *testing.T, l *loop.Loop) {
		n := 0
		var id loop.RepeatID
		id, _ = l.Repeat(time.Millisecond, func() {
			if n++; n == 3 {
				if !l.OffRepeat(id) {
					t.Error("OffRepeat from its own callback = false")
				}
			}
		})
		runLoop(t, l)
		if n != 3 {
			t.Fatalf("the interval ran %d times, want 3", n)
		}
	})
	loopRow(t, "setImmediate", func(t *testing.T, l *loop.Loop) {
		var order []string
		l.Delay(0, func() {
			order = append(order, "a")
			l.Delay(0, func() { order = append(order, "c") }) // the next turn
			order = append(order, "a done")
		})
		ctx := bounded(t)
		must(t, l.Reactor().RunOnce(ctx))
		if diff := cmp.Diff([]string{"a", "a done"}, order); diff != "" {
			t.Fatalf("after one turn (-want +got):\n%s", diff)
		}
		runLoop(t, l)
		if diff := cmp.Diff([]string{"a", "a done", "c"}, order); diff != "" {
			t.Fatalf("after Run (-want +got):\n%s", diff)
		}
	})
	row(t, "timer.refresh", func(t *testing.T, r *reactor.Reactor) {
		tm, _ := r.NewTimer(20*time.Millisecond, 0)
		fired, events := 0, 0
		firedAt := -1
		tm.OnFire(func(error) { fired++; firedAt = events })
		// Five events, one a turn: each refreshes the debounce timer.
		var next func()
		next = func() {
			events++
			must(t, tm.Refresh())
			if events < 5 {
				d, _ := r.NewTimer(0, 0)
				d.OnFire(func(error) { next() })
				d.Start()
			}
		}
		next()
		run(t, r)
		if fired != 1 || firedAt != 5 {
			t.Fatalf("fired %d times, after %d events; want once, after the 5 events", fired, firedAt)
		}
		must(t, tm.Refresh()) // still usable after firing
		run(t, r)
		if fired != 2 {
			t.Fatalf("fired %d times after a Refresh of the fired timer, want 2", fired)
		}
	})
	row(t, "unref", func(t *testing.T, r *reactor.Reactor) {
		hidden, _ := r.NewTimer(time.Millisecond, time.Millisecond)
		must(t, hidden.SetHidden(true))
		n := 0
		hidden.OnFire(func(error) { n++ })
		must(t, hidden.Start())
		// Something else keeps the loop running until the hidden timer
		// has delivered three times.
		keeper, _ := r.NewTimer(time.Millisecond, time.Millisecond)
		keeper.OnFire(func(error) {
			if n >= 3 {
				keeper.Stop()
			}
		})
		must(t, keeper.Start())
		run(t, r) // returns with the hidden periodic timer still started
		if n < 3 || hidden.Flags().Has(event.Closed) {
			t.Fatalf("hidden timer delivered %d times (closed: %v), want 3 or more, still open", n, hidden.Flags().Has(event.Closed))
		}
		// Other kinds: a listener, a signal, a pending future.
		ln, err := uv.Listen(r, "tcp", "127.0.0.1:0")
		must(t, err)
		defer ln.Close()
		must(t, ln.Start())
		must(t, ln.SetHidden(true))
		sig, _ := uv.NewSignal(r, syscall.SIGUSR2)
		defer sig.Close()
		must(t, sig.Start())
		must(t, sig.SetHidden(true))
		f := event.NewFuture[int](r)
		event.On(f, func(int, error) {})
		must(t, f.SetHidden(true))
		run(t, r) // returns: the started listener, signal and future are hidden
		if r.Alive() {
			t.Fatal("Alive with only hidden events")
		}
		must(t, ln.SetHidden(false)) // ref(): counts again
		if !r.Alive() {
			t.Fatal("not Alive after SetHidden(false) on a started listener")
		}
		must(t, ln.SetHidden(true))
		// A hidden event does not hide a deadlock.
		_, err = coRun(t, r, func(ctx context.Context) (struct{}, error) {
			tm, _ := r.NewTimer(time.Hour, 0)
			must(t, tm.SetHidden(true))
			_, err := event.Await(ctx, event.Any(), tm)
			return struct{}{}, err
		})
		if !errors.Is(err, event.ErrDeadlock) {
			t.Fatalf("a wait on a hidden timer alone = %v, want ErrDeadlock", err)
		}
		f.Resolve(0)
	})
	row(t, "held by the reactor", func(t *testing.T, r *reactor.Reactor) {
		n := 0
		func() { // a helper that sets up a timer and drops it
			tm, _ := r.NewTimer(time.Millisecond, time.Millisecond)
			tm.OnFire(func(error) {
				if n++; n == 3 {
					tm.Stop()
				}
			})
			tm.Start()
		}()
		runtime.GC()
		runtime.GC()
		run(t, r)
		if n != 3 {
			t.Fatalf("the dropped timer fired %d times, want 3", n)
		}
	})
	row(t, "new Promise", func(t *testing.T, r *reactor.Reactor) {
		f := event.NewFuture[string](r)
		elsewhere(t, r, func() { f.Resolve("v") }) // from any goroutine
		v, err := coRun(t, r, func(ctx context.Context) (string, error) {
			v, err := f.Await(ctx)
			if err != nil {
				return "", err
			}
			w, err := event.AwaitValue(ctx, f)
			return v + w, err
		})
		if v != "vv" || err != nil {
			t.Fatalf("await = %q, %v; want vv", v, err)
		}
		g := event.NewFuture[string](r)
		boom := errors.New("boom")
		elsewhere(t, r, func() { g.Reject(boom) })
		_, err = coRun(t, r, func(ctx context.Context) (string, error) { return g.Await(ctx) })
		if !errors.Is(err, boom) {
			t.Fatalf("await of a rejected future = %v, want boom", err)
		}
	})
	row(t, "Promise.all", func(t *testing.T, r *reactor.Reactor) {
		a, b := event.NewFuture[int](r), event.NewFuture[int](r)
		elsewhere(t, r, func() { b.Resolve(2); a.Resolve(1) })
		vs, err := coRun(t, r, func(ctx context.Context) ([]int, error) { return event.AwaitAll(ctx, a, b) })
		if diff := cmp.Diff([]int{1, 2}, vs); diff != "" || err != nil {
			t.Fatalf("AwaitAll = %v, %v (-want +got):\n%s", vs, err, diff)
		}
		c, d := event.NewFuture[int](r), event.NewFuture[int](r) // c never completes
		boom := errors.New("boom")
		elsewhere(t, r, func() { d.Reject(boom) })
		_, err = coRun(t, r, func(ctx context.Context) ([]int, error) { return event.AwaitAll(ctx, c, d) })
		if !errors.Is(err, boom) {
			t.Fatalf("AwaitAll with a failure = %v, want the first error", err)
		}
		c.Resolve(0)
	})
	row(t, "Promise.allSettled", func(t *testing.T, r *reactor.Reactor) {
		a, b := event.NewFuture[int](r), event.NewFuture[int](r)
		boom := errors.New("boom")
		elsewhere(t, r, func() { b.Reject(boom); a.Resolve(1) })
		type settled struct {
			vs   []int
			errs []error
		}
		s, err := coRun(t, r, func(ctx context.Context) (settled, error) {
			vs, errs, err := event.AwaitAllSettled(ctx, a, b)
			return settled{vs, errs}, err
		})
		if err != nil || !cmp.Equal([]int{1, 0}, s.vs) || s.errs[0] != nil || !errors.Is(s.errs[1], boom) {
			t.Fatalf("AwaitAllSettled = %v, %v, %v; want [1 0], [nil boom], nil", s.vs, s.errs, err)
		}
		outs, err := coRun(t, r, func(ctx context.Context) ([]event.Outcome, error) {
			return event.Await(ctx, event.All().IgnoreErrors(), a, b)
		})
		if err != nil || outs[0].Result != 1 || !errors.Is(outs[1].Err, boom) {
			t.Fatalf("Await(All().IgnoreErrors()) = %+v, %v; want 1 and boom by position, nil", outs, err)
		}
	})
	row(t, "Promise.race", func(t *testing.T, r *reactor.Reactor) {
		a, b := event.NewFuture[int](r), event.NewFuture[int](r) // a never completes
		elsewhere(t, r, func() { b.Resolve(2) })
		outs, err := coRun(t, r, func(ctx context.Context) ([]event.Outcome, error) {
			return event.Await(ctx, event.Any(), a, b)
		})
		w, ok := event.Winner(outs)
		if err != nil || !ok || w.Index != 1 || w.Result != 2 {
			t.Fatalf("race = %+v, %v; want b's 2", outs, err)
		}
		a.Resolve(0)
	})
	row(t, "Promise.any", func(t *testing.T, r *reactor.Reactor) {
		a, b := event.NewFuture[int](r), event.NewFuture[int](r)
		boom := errors.New("boom")
		elsewhere(t, r, func() { a.Reject(boom); b.Resolve(2) })
		type first struct{ winner, v int }
		var f first
		_, err := coRun(t, r, func(ctx context.Context) (struct{}, error) {
			var err error
			f.winner, f.v, err = event.AwaitFirst(ctx, a, b)
			return struct{}{}, err
		})
		if err != nil || f != (first{1, 2}) {
			t.Fatalf("AwaitFirst = %+v, %v; want b (1) with 2", f, err)
		}
		c, d := event.NewFuture[int](r), event.NewFuture[int](r)
		bang := errors.New("bang")
		elsewhere(t, r, func() { c.Reject(boom); d.Reject(bang) })
		_, err = coRun(t, r, func(ctx context.Context) (struct{}, error) {
			var err error
			f.winner, f.v, err = event.AwaitFirst(ctx, c, d)
			return struct{}{}, err
		})
		if f.winner != -1 || !errors.Is(err, boom) || !errors.Is(err, bang) {
			t.Fatalf("AwaitFirst of failures = %+v, %v; want -1 and both errors joined", f, err)
		}
	})
	row(t, "AbortSignal.timeout", func(t *testing.T, r *reactor.Reactor) {
		timesOut(t, r)
	})
	t.Run("unhandledRejection", func(t *testing.T) {
		eachDriver(t, func(t *testing.T, d reactor.Driver) {
			rep := &reports{}
			r := newReactor(t, reactor.Options{Driver: d, OnReport: rep.add})
			boom := errors.New("boom")
			f := event.NewFuture[int](r)
			f.Reject(boom)
			f.Dispose() // nobody observed it
			co, _ := reactor.Spawn(bounded(t), r, func(context.Context) (int, error) { return 1, nil })
			run(t, r)
			co.Dispose() // nobody used its result
			want := []string{"unhandled error", "result never used"}
			if diff := cmp.Diff(want, rep.msgs); diff != "" || !errors.Is(rep.errs[0], boom) {
				t.Fatalf("reports %v (-want +got):\n%s", rep.errs, diff)
			}
		})
	})
	t.Run("uncaughtException", func(t *testing.T) {
		eachDriver(t, func(t *testing.T, d reactor.Driver) {
			rep := &reports{}
			l, err := loop.New(loop.Options{ReactorOptions: reactor.Options{Driver: d, OnReport: rep.add}})
			must(t, err)
			defer l.Close()
			after := false
			l.Delay(0, func() { panic("oops") })
			l.Delay(time.Millisecond, func() { after = true })
			runLoop(t, l)
			var pe *event.PanicError
			if len(rep.errs) != 1 || !errors.As(rep.errs[0], &pe) || pe.Value != "oops" || !after {
				t.Fatalf("reports %q %v, the loop went on: %v; want one panic report and the next timer run", rep.msgs, rep.errs, after)
			}
		})
	})
	loopRow(t, "process.on('SIGINT')", func(t *testing.T, l *loop.Loop) {
		// With Unref the watch does not keep Run going.
		must(t, l.OnSignal(syscall.SIGINT, func(syscall.Signal) {}, loop.SignalOptions{Unref: true}))
		runLoop(t, l)
		// Without it, Run goes on until OffSignal.
		var got []syscall.Signal
		must(t, l.OnSignal(syscall.SIGINT, func(s syscall.Signal) {
			got = append(got, s)
			l.OffSignal(syscall.SIGINT)
		}, loop.SignalOptions{}))
		l.Delay(0, func() { kill(t, syscall.SIGINT) })
		runLoop(t, l)
		if diff := cmp.Diff([]syscall.Signal{syscall.SIGINT}, got); diff != "" {
			t.Fatalf("signals (-want +got):\n%s", diff)
		}
		// One uv.Signal for both; the result says which.
		signalSays(t, l.Reactor(), func() { runLoop(t, l) }, syscall.SIGTERM, syscall.SIGINT, syscall.SIGTERM)
	})
	row(t, "worker_threads", func(t *testing.T, r *reactor.Reactor) {
		task, err := uv.QueueTask(r, func(context.Context) (int, error) { return 6 * 7, nil })
		must(t, err)
		th, err := uv.NewThread(r, func(context.Context) (string, error) { return "thread", nil })
		must(t, err)
		type both struct {
			n int
			s string
		}
		got, err := coRun(t, r, func(ctx context.Context) (both, error) {
			n, err := task.Await(ctx)
			if err != nil {
				return both{}, err
			}
			s, err := th.Await(ctx)
			return both{n, s}, err
		})
		if err != nil || got != (both{42, "thread"}) {
			t.Fatalf("QueueTask, NewThread = %+v, %v; want 42, thread", got, err)
		}
	})
}
