package uv_test

import (
	"context"
	"errors"
	"io/fs"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// closeBounded closes r from another goroutine and fails if it hangs.
func closeBounded(t *testing.T, r *reactor.Reactor) error {
	t.Helper()
	var err error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); err = r.Close() }()
	if !waitBounded(t, "reactor Close", &wg) {
		return errors.New("hang")
	}
	return err
}

// midflightKinds makes, on r, one event of each Go-owned system kind that
// is still running; cancelled is closed when the kind's function sees its
// context end (nil for kinds without one); cleanup ends what is left.
var midflightKinds = map[string]func(t *testing.T, r *reactor.Reactor) (ev event.Event, cancelled chan struct{}, cleanup func()){
	"process": func(t *testing.T, r *reactor.Reactor) (event.Event, chan struct{}, func()) {
		p, err := uv.StartProcess(r, uv.ProcessOptions{Args: []string{"/bin/sleep", "30"}})
		if err != nil {
			t.Fatalf("Spawn: %v", err)
		}
		return p, nil, func() { p.Kill(syscall.SIGKILL) }
	},
	"command": func(t *testing.T, r *reactor.Reactor) (event.Event, chan struct{}, func()) {
		ex, err := uv.NewCommand(r, "sleep 30", uv.CommandOptions{Grace: 50 * time.Millisecond})
		if err != nil {
			t.Fatalf("NewCommand: %v", err)
		}
		return ex, nil, func() { syscall.Kill(-ex.Pid(), syscall.SIGKILL) }
	},
	"task": func(t *testing.T, r *reactor.Reactor) (event.Event, chan struct{}, func()) {
		c, release, work := cancellableWork()
		tk, err := uv.QueueTask(r, work)
		if err != nil {
			t.Fatalf("QueueTask: %v", err)
		}
		return tk, c, func() { close(release) }
	},
	"thread": func(t *testing.T, r *reactor.Reactor) (event.Event, chan struct{}, func()) {
		c, release, work := cancellableWork()
		th, err := uv.NewThread(r, work)
		if err != nil {
			t.Fatalf("NewThread: %v", err)
		}
		return th, c, func() { close(release) }
	},
	"signal": func(t *testing.T, r *reactor.Reactor) (event.Event, chan struct{}, func()) {
		sg, err := uv.NewSignal(r, syscall.SIGUSR1)
		if err != nil {
			t.Fatalf("NewSignal: %v", err)
		}
		if err := sg.Start(); err != nil {
			t.Fatalf("Signal Start: %v", err)
		}
		return sg, nil, func() {}
	},
}

// The reactor is closed, with Serve running, while a Process, a Command, a
// Task, a Thread or a Signal is in flight. The package story says Close
// "closes every event still open (subscribers get ErrClosed)": the event
// must be closed, its subscriber must hear it, a Task's or Thread's
// function must see its context cancelled (as reactor.Go's does), and an
// Await on it afterwards must return rather than wait for its context.
func TestCloseWhileSystemEventsRun(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		for name, mk := range midflightKinds {
			t.Run(name, func(t *testing.T) {
				r := uv.UvtNewReactorOn(t, d).Reactor
				defer r.Close()
				var ev event.Event
				var cancelled chan struct{}
				cleanup := func() {}
				heard := make(chan error, 1)
				err := r.Call(func() {
					ev, cancelled, cleanup = mk(t, r)
					ev.AddCallback(event.NewCallback(func(_ event.Event, _ any, err error) {
						select {
						case heard <- err:
						default:
						}
					}))
				})
				defer func() { cleanup() }()
				if err != nil {
					t.Fatalf("setup: %v", err)
				}
				serveDone := make(chan error, 1)
				go func() { serveDone <- r.Serve(context.Background()) }()
				time.Sleep(20 * time.Millisecond) // let the work start; not a decision
				if err := closeBounded(t, r); err != nil {
					t.Fatalf("Close = %v", err)
				}
				select {
				case <-serveDone:
				case <-time.After(raceSafety):
					t.Fatalf("Serve did not return")
				}
				if ev.Flags()&event.Closed == 0 {
					t.Errorf("%s: not closed after reactor Close (flags %v)", name, ev.Flags())
				}
				select {
				case err := <-heard:
					t.Logf("subscriber heard %v", err)
				case <-time.After(2 * time.Second):
					t.Errorf("%s: subscriber never heard the reactor's Close", name)
				}
				if cancelled != nil {
					select {
					case <-cancelled:
					case <-time.After(2 * time.Second):
						t.Errorf("%s: function's context not cancelled by the reactor's Close", name)
					}
				}
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				defer cancel()
				_, aerr := event.Await(ctx, event.Any(), ev)
				if errors.Is(aerr, context.DeadlineExceeded) {
					t.Errorf("%s: Await after reactor Close waited for its context: %v", name, aerr)
				}
			})
		}
	})
}

// Close and Shutdown called from inside a callback (on the loop goroutine)
// must be refused with ErrRunning, not deadlock waiting for the loop that
// calls them.
func TestCloseFromCallbackIsRefused(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		r := uv.UvtNewReactorOn(t, d).Reactor
		defer r.Close()
		tr, err := uv.NewTrigger(r)
		if err != nil {
			t.Fatal(err)
		}
		got := make(chan error, 2)
		tr.AddCallback(event.NewCallback(func(ev event.Event, _ any, _ error) {
			got <- r.Close()
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			got <- r.Shutdown(ctx)
			cancel()
			ev.Close()
		}))
		tr.Start()
		tr.Send()
		runDone := make(chan error, 1)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), raceSafety)
			defer cancel()
			runDone <- r.Run(ctx)
		}()
		select {
		case err := <-runDone:
			if err != nil {
				t.Errorf("Run = %v", err)
			}
		case <-time.After(raceSafety + time.Second):
			t.Fatal("Run hung: Close from a callback deadlocked")
		}
		for i := 0; i < 2; i++ {
			select {
			case err := <-got:
				if !errors.Is(err, reactor.ErrRunning) {
					t.Errorf("Close/Shutdown #%d from a callback = %v, want ErrRunning", i, err)
				}
			default:
				t.Errorf("callback did not run")
			}
		}
		if err := closeBounded(t, r); err != nil {
			t.Errorf("Close after = %v", err)
		}
	})
}

// Close from inside a Task's function, a Thread's function and a Go
// coroutine: these are not the loop goroutine, so Close must work (or be
// refused), and never deadlock.
func TestCloseFromWorkerFunctions(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		for _, where := range []string{"task", "thread", "go", "spawn"} {
			t.Run(where, func(t *testing.T) {
				r := uv.UvtNewReactorOn(t, d).Reactor
				defer r.Close()
				res := make(chan error, 1)
				fn := func(ctx context.Context) (any, error) {
					res <- r.Close()
					return nil, nil
				}
				var err error
				switch where {
				case "task":
					_, err = uv.QueueTask(r, fn)
				case "thread":
					_, err = uv.NewThread(r, fn)
				case "go":
					_, err = reactor.Go(context.Background(), r, fn)
				case "spawn":
					_, err = reactor.Spawn(context.Background(), r, fn)
				}
				if err != nil {
					t.Fatalf("create: %v", err)
				}
				runDone := make(chan error, 1)
				go func() { runDone <- r.Run(context.Background()) }()
				select {
				case err := <-res:
					if err != nil && !errors.Is(err, reactor.ErrRunning) {
						t.Errorf("Close from %s = %v", where, err)
					}
				case <-time.After(raceSafety):
					buf := make([]byte, 1<<20)
					t.Fatalf("Close from %s hung\n%s", where, buf[:runtime.Stack(buf, true)])
				}
				select {
				case <-runDone:
				case <-time.After(raceSafety):
					t.Fatalf("Run did not return after Close from %s", where)
				}
			})
		}
	})
}

// A Process whose program does not exist must be refused with an error
// matching fs.ErrNotExist (a path) or exec.ErrNotFound (a PATH lookup), and leave the reactor running.
func TestSpawnMissingProgram(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		r := uv.UvtNewReactorOn(t, d).Reactor
		defer r.Close()
		for _, args := range [][]string{{"/nonexistent/prog"}, {"no-such-program-xyz"}, {""}, nil} {
			p, err := uv.StartProcess(r, uv.ProcessOptions{Args: args})
			if err == nil {
				t.Errorf("Spawn(%q) = %v, nil; want an error", args, p)
				p.Kill(syscall.SIGKILL)
				continue
			}
			if len(args) == 1 && args[0] != "" && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, exec.ErrNotFound) {
				t.Errorf("Spawn(%q) = %v, want an error matching fs.ErrNotExist or exec.ErrNotFound", args, err)
			}
		}
		ex, err := uv.NewCommand(r, "exec /nonexistent/prog", uv.CommandOptions{})
		if err != nil {
			t.Fatalf("NewCommand: %v", err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), raceSafety)
		defer cancel()
		go r.Run(ctx)
		outs, err := event.Await(ctx, event.All(), ex)
		if err != nil && !errors.Is(err, event.ErrClosed) {
			t.Logf("Await exec: %v", err)
		}
		if len(outs) == 1 {
			if res, ok := outs[0].Result.(*uv.CommandResult); !ok || res == nil {
				t.Errorf("exec of a missing program: result %#v err %v", outs[0].Result, outs[0].Err)
			}
		}
		if err := closeBounded(t, r); err != nil {
			t.Errorf("Close = %v", err)
		}
	})
}

// cancellableWork is a Task's or Thread's function that blocks until its
// context is cancelled (then it closes cancelled) or release is closed.
func cancellableWork() (cancelled, release chan struct{}, work func(context.Context) (any, error)) {
	cancelled, release = make(chan struct{}), make(chan struct{})
	return cancelled, release, func(ctx context.Context) (any, error) {
		select {
		case <-ctx.Done():
			close(cancelled)
		case <-release:
		}
		return nil, nil
	}
}
