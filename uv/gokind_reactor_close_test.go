package uv_test

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// The reactor's Close closes every event it holds: a started Go-owned
// event (a running Task, Thread, Process, Command, or a started Signal) must
// tell its subscribers ErrClosed, as a started timer or trigger does
// (architecture §2 rule 7; Shutdown's doc, step 3).
func TestReactorCloseTellsStartedGoOwnedSubscribers(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	kinds := []struct {
		name string
		make func(r *reactor.Reactor) (event.Event, error)
	}{
		{"Task", func(r *reactor.Reactor) (event.Event, error) {
			return uv.QueueTask(r, func(ctx context.Context) (any, error) { <-release; return nil, nil })
		}},
		{"Thread", func(r *reactor.Reactor) (event.Event, error) {
			return uv.NewThread(r, func(ctx context.Context) (any, error) { <-release; return nil, nil })
		}},
		{"Process", func(r *reactor.Reactor) (event.Event, error) {
			return uv.StartProcess(r, uv.ProcessOptions{Args: []string{"/bin/sleep", "0.5"}})
		}},
		{"Command", func(r *reactor.Reactor) (event.Event, error) {
			return uv.NewCommand(r, "sleep 0.5", uv.CommandOptions{})
		}},
		{"Signal", func(r *reactor.Reactor) (event.Event, error) {
			s, err := uv.NewSignal(r, syscall.SIGUSR2)
			if err == nil {
				err = s.Start()
			}
			return s, err
		}},
	}
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			r := uv.UvtNewReactor(t).Reactor
			ev, err := k.make(r)
			if err != nil {
				t.Fatal(err)
			}
			got := make(chan error, 1)
			if _, err := event.Subscribe(ev, func(_ event.Event, _ any, err error) {
				select {
				case got <- err:
				default:
				}
			}); err != nil {
				t.Fatal(err)
			}
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-got:
				if !errors.Is(err, event.ErrClosed) {
					t.Fatalf("subscriber heard %v at reactor Close, want ErrClosed", err)
				}
			case <-time.After(2 * time.Second): // a safety bound: the notification is due inside Close
				t.Fatalf("subscriber of a started %s never heard the reactor's Close (state %v)", k.name, event.StateOf(ev))
			}
		})
	}
}

// What a reactor's Close does to the work behind a started Go-owned event,
// on both drivers: a task's and a thread's context is canceled, a child
// (even one whose Process was stopped) is still reaped, and a Signal gives
// its signal back.
func TestReactorCloseEndsGoOwnedWork(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		r := u.Reactor
		running, canceled := make(chan string, 2), make(chan string, 2)
		waitCtx := func(name string) func(ctx context.Context) (any, error) {
			return func(ctx context.Context) (any, error) {
				running <- name
				<-ctx.Done()
				canceled <- name
				return nil, ctx.Err()
			}
		}
		pool, err := uv.NewTaskPool(1) // its own: the default pool may be busy with other tests' work
		uv.UvtMust(t, err)
		task, err := uv.QueueTaskIn(pool, r, waitCtx("task"))
		uv.UvtMust(t, err)
		th, err := uv.NewThread(r, waitCtx("thread"))
		uv.UvtMust(t, err)
		p, err := uv.StartProcess(r, uv.ProcessOptions{Args: []string{"/bin/sleep", "0.2"}})
		uv.UvtMust(t, err)
		uv.UvtMust(t, p.Stop()) // stopped, it still delivers its end: Close must tell it
		sig, err := uv.NewSignal(r, syscall.SIGUSR2)
		uv.UvtMust(t, err)
		uv.UvtMust(t, sig.Start())
		uv.UvtMust(t, sig.Stop())
		uv.UvtMust(t, sig.Start())
		// Both run (a task still queued would be taken back instead).
		uv.UvtRecv(t, running, "running function")
		uv.UvtRecv(t, running, "running function")
		uv.UvtMust(t, r.Close())

		got := []string{uv.UvtRecv(t, canceled, "canceled context"), uv.UvtRecv(t, canceled, "canceled context")}
		slices.Sort(got)
		if diff := cmp.Diff([]string{"task", "thread"}, got); diff != "" {
			t.Errorf("functions that saw their context canceled (-want +got):\n%s", diff)
		}
		for i, ev := range []event.Event{task, th, p, sig} {
			if !ev.Flags().Has(event.Closed) {
				t.Errorf("event %d (Task, Thread, Process, Signal) is not closed after the reactor's Close", i)
			}
		}
		uv.UvtWaitFor(t, "the child reaped", func() bool { _, ok := p.ExitStatus(); return ok })
		if n := uv.UvtSignalLines(); n != 0 {
			t.Errorf("the dispatcher still holds %d signal(s) after the reactor's Close", n)
		}
	})
}

// The reactor-close hook of a Go-owned event holds it only weakly: a
// Signal started once, stopped and dropped without Close is collected
// while its reactor lives.
func TestReactorCloseHookLetsDroppedEventGo(t *testing.T) {
	u := uv.UvtNewReactor(t)
	var collected atomic.Bool
	func() {
		s, err := uv.NewSignal(u.Reactor, syscall.SIGUSR2)
		uv.UvtMust(t, err)
		uv.UvtMust(t, s.Start())
		uv.UvtMust(t, s.Stop())
		runtime.AddCleanup(s, func(c *atomic.Bool) { c.Store(true) }, &collected)
	}()
	uv.UvtWaitFor(t, "collection of the dropped Signal", func() bool { runtime.GC(); return collected.Load() })
	uv.UvtShutdown(t, u, false)
}
