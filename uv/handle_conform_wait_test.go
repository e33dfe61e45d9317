package uv_test

import (
	"context"
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/uvevent/uvevent/async"
	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/loop"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// Every method that waits, on both drivers, with a context cancelled before
// the call and with a short deadline, on something that cannot complete
// before the context ends: the wait ends with the context's error,
// errors.Is-able, and never with an empty success.

// waitRow is one waiting method: setup makes what it waits for pending (on
// the served reactor u) and returns the wait.
type waitRow struct {
	name  string
	setup func(t *testing.T, u *uv.UvtReactor) (wait func(ctx context.Context) error)
}

// blockedResolver holds every lookup of the pure-Go driver until its
// context ends.
type blockedResolver struct{}

func (blockedResolver) LookupNetIP(ctx context.Context, _, _ string) ([]netip.Addr, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

func (blockedResolver) LookupPort(ctx context.Context, _, _ string) (int, error) {
	<-ctx.Done()
	return 0, ctx.Err()
}

func (blockedResolver) LookupAddr(ctx context.Context, _ string) ([]string, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// holdLookups keeps every lookup on u in flight until the test ends: the
// resolver blocks until the lookup's context ends (both drivers ask Go's
// resolver).
func holdLookups(t *testing.T, u *uv.UvtReactor) {
	uv.UvtSetResolver(t, blockedResolver{})
}

// pendingFuture is a future of u nobody resolves.
func pendingFuture(u *uv.UvtReactor) *event.Future[int] {
	return event.NewFuture[int](u.Reactor.Owner())
}

// stuckCoroutine is a coroutine of u waiting on a future nobody resolves,
// whatever its context says.
func stuckCoroutine(t *testing.T, u *uv.UvtReactor) *reactor.Coroutine[int] {
	f := pendingFuture(u)
	c, err := reactor.Go(context.Background(), u.Reactor, func(context.Context) (int, error) {
		return f.Await(context.Background())
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Resolve(0) })
	return c
}

func waitRows() []waitRow {
	ignore := func(_ any, err error) error { return err }
	return []waitRow{
		{"event.Await", func(t *testing.T, u *uv.UvtReactor) func(context.Context) error {
			f := pendingFuture(u)
			return func(ctx context.Context) error { return ignore(event.Await(ctx, event.Any(), f)) }
		}},
		{"event.Await All", func(t *testing.T, u *uv.UvtReactor) func(context.Context) error {
			f, g := pendingFuture(u), pendingFuture(u)
			return func(ctx context.Context) error { return ignore(event.Await(ctx, event.All(), f, g)) }
		}},
		{"event.AwaitValue", func(t *testing.T, u *uv.UvtReactor) func(context.Context) error {
			f := pendingFuture(u)
			return func(ctx context.Context) error { return ignore(event.AwaitValue[int](ctx, f)) }
		}},
		{"event.AwaitAll", func(t *testing.T, u *uv.UvtReactor) func(context.Context) error {
			f := pendingFuture(u)
			return func(ctx context.Context) error { return ignore(event.AwaitAll[int](ctx, f)) }
		}},
		{"event.AwaitFirst", func(t *testing.T, u *uv.UvtReactor) func(context.Context) error {
			f := pendingFuture(u)
			return func(ctx context.Context) error { _, _, err := event.AwaitFirst[int](ctx, f); return err }
		}},
		{"Future.Await", func(t *testing.T, u *uv.UvtReactor) func(context.Context) error {
			f := pendingFuture(u)
			return func(ctx context.Context) error { return ignore(f.Await(ctx)) }
		}},
		{"Coroutine.Await", func(t *testing.T, u *uv.UvtReactor) func(context.Context) error {
			c := stuckCoroutine(t, u)
			return func(ctx context.Context) error { return ignore(c.Await(ctx)) }
		}},
		{"reactor.Spawn result", func(t *testing.T, u *uv.UvtReactor) func(context.Context) error {
			return spawnResult(t, u, reactor.Spawn[int])
		}},
		{"reactor.Go result", func(t *testing.T, u *uv.UvtReactor) func(context.Context) error {
			return spawnResult(t, u, reactor.Go[int])
		}},
		{"AddrInfo.Await", func(t *testing.T, u *uv.UvtReactor) func(context.Context) error {
			holdLookups(t, u)
			a, err := uv.NewAddrInfo(u.Reactor, "localhost", "", uv.AddrInfoHints{})
			if err != nil {
				t.Fatal(err)
			}
			return func(ctx context.Context) error {
				addrs, err := a.Await(ctx)
				if err == nil {
					t.Errorf("AddrInfo.Await = %v, nil", addrs)
				}
				return err
			}
		}},
		{"NameInfo.Await", func(t *testing.T, u *uv.UvtReactor) func(context.Context) error {
			holdLookups(t, u)
			n, err := uv.NewNameInfo(u.Reactor, netip.MustParseAddrPort("127.0.0.1:80"), uv.NameInfoHints{})
			if err != nil {
				t.Fatal(err)
			}
			return func(ctx context.Context) error { return ignore(n.Await(ctx)) }
		}},
		{"FSRequest.Await", func(t *testing.T, u *uv.UvtReactor) func(context.Context) error {
			q := blockedFIFORead(t, u)
			return func(ctx context.Context) error {
				b, err := q.Await(ctx)
				if err == nil {
					t.Errorf("FSRequest.Await = %q, nil", b)
				}
				return err
			}
		}},
		{"Task.Await", func(t *testing.T, u *uv.UvtReactor) func(context.Context) error {
			release := make(chan struct{})
			t.Cleanup(func() { close(release) })
			task, err := uv.QueueTaskIn(taskPool(t), u.Reactor, func(context.Context) (int, error) { <-release; return 1, nil })
			if err != nil {
				t.Fatal(err)
			}
			return func(ctx context.Context) error { return ignore(task.Await(ctx)) }
		}},
		{"Thread.Await", func(t *testing.T, u *uv.UvtReactor) func(context.Context) error {
			release := make(chan struct{})
			t.Cleanup(func() { close(release) })
			th, err := uv.NewThread(u.Reactor, func(context.Context) (int, error) { <-release; return 1, nil })
			if err != nil {
				t.Fatal(err)
			}
			return func(ctx context.Context) error { return ignore(th.Await(ctx)) }
		}},
		{"Process.Await", func(t *testing.T, u *uv.UvtReactor) func(context.Context) error {
			p, err := uv.StartProcess(u.Reactor, uv.ProcessOptions{Args: []string{"sleep", "30"}, KillOnClose: true})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { p.Close() })
			return func(ctx context.Context) error { return ignore(p.Await(ctx)) }
		}},
		{"Command.Await", func(t *testing.T, u *uv.UvtReactor) func(context.Context) error {
			c, err := uv.NewCommand(u.Reactor, "sleep 30", uv.CommandOptions{Grace: time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
			return func(ctx context.Context) error { return ignore(c.Await(ctx)) }
		}},
		{"Listener.AcceptIO", func(t *testing.T, u *uv.UvtReactor) func(context.Context) error {
			ln, err := uv.Listen(u.Reactor, "tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { ln.Close() })
			return func(ctx context.Context) error { return ignore(ln.AcceptIO(ctx)) }
		}},
		{"IPC.Receive", func(t *testing.T, u *uv.UvtReactor) func(context.Context) error {
			fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { syscall.Close(fds[1]) })
			p, err := uv.OpenIPC(u.Reactor, fds[0])
			if err != nil {
				syscall.Close(fds[0])
				t.Fatal(err)
			}
			t.Cleanup(func() { p.Close() })
			return func(ctx context.Context) error { return ignore(p.Receive(ctx)) }
		}},
		{"OpenFile", func(t *testing.T, u *uv.UvtReactor) func(context.Context) error {
			fifo := filepath.Join(t.TempDir(), "fifo") // an open that blocks until a writer comes
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if f, err := os.OpenFile(fifo, os.O_RDWR, 0); err == nil {
					f.Close()
				}
			})
			return func(ctx context.Context) error {
				f, err := uv.OpenFile(ctx, u.Reactor, fifo, os.O_RDONLY, 0)
				if err == nil {
					f.Close()
				}
				return err
			}
		}},
		{"Channel.Recv", func(t *testing.T, u *uv.UvtReactor) func(context.Context) error {
			c, err := async.NewChannel[int](u.Reactor, 0)
			if err != nil {
				t.Fatal(err)
			}
			return func(ctx context.Context) error { return ignore(c.Recv().Await(ctx)) }
		}},
		{"Channel.Send", func(t *testing.T, u *uv.UvtReactor) func(context.Context) error {
			c, err := async.NewChannel[int](u.Reactor, 0)
			if err != nil {
				t.Fatal(err)
			}
			return func(ctx context.Context) error { return ignore(c.Send(1).Await(ctx)) }
		}},
		{"Pool.Acquire", func(t *testing.T, u *uv.UvtReactor) func(context.Context) error {
			p, err := async.NewPool(u.Reactor, async.PoolOptions[int]{Max: 1, New: func(context.Context) (int, error) { return 1, nil }})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { p.Close() })
			if _, err := p.Acquire().Await(waitCtx(t)); err != nil {
				t.Fatal(err)
			}
			return func(ctx context.Context) error { return ignore(p.Acquire().Await(ctx)) }
		}},
		{"Suspension.Suspend", func(t *testing.T, u *uv.UvtReactor) func(context.Context) error {
			s, err := async.NewSuspension[int](u.Reactor)
			if err != nil {
				t.Fatal(err)
			}
			return func(ctx context.Context) error { return ignore(s.Suspend(ctx)) }
		}},
		{"loop.Suspension", func(t *testing.T, u *uv.UvtReactor) func(context.Context) error {
			l, err := loop.New(loop.Options{Reactor: u.Reactor})
			if err != nil {
				t.Fatal(err)
			}
			s := l.Suspension()
			return func(ctx context.Context) error { return ignore(s.Suspend(ctx)) }
		}},
		{"Group.Wait", func(t *testing.T, u *uv.UvtReactor) func(context.Context) error {
			g := stuckGroup(t, u)
			return func(ctx context.Context) error { return ignore(g.Wait(ctx)) }
		}},
		{"Group.WaitAny", func(t *testing.T, u *uv.UvtReactor) func(context.Context) error {
			g := stuckGroup(t, u)
			return func(ctx context.Context) error { _, _, err := g.WaitAny(ctx); return err }
		}},
		{"Group.WaitN", func(t *testing.T, u *uv.UvtReactor) func(context.Context) error {
			g := stuckGroup(t, u)
			return func(ctx context.Context) error { return ignore(g.WaitN(ctx, 1)) }
		}},
		{"Scope.Wait", func(t *testing.T, u *uv.UvtReactor) func(context.Context) error {
			s := stuckScope(t, u)
			return func(ctx context.Context) error { return s.Wait(ctx) }
		}},
		{"Scope.Close", func(t *testing.T, u *uv.UvtReactor) func(context.Context) error {
			s := stuckScope(t, u)
			return func(ctx context.Context) error { return s.Close(ctx) }
		}},
	}
}

// spawnResult spawns, with the wait's context, a coroutine that waits with
// that context on a future nobody resolves: its result is the context's
// error. A started timer of an hour keeps the reactor from reporting the
// wait as a deadlock (a context's deadline does not count as a way out).
func spawnResult(t *testing.T, u *uv.UvtReactor, spawn func(context.Context, *reactor.Reactor, func(context.Context) (int, error)) (*reactor.Coroutine[int], error)) func(context.Context) error {
	f := pendingFuture(u)
	tm, err := u.NewTimer(time.Hour, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := tm.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tm.Close() })
	return func(ctx context.Context) error {
		c, err := spawn(ctx, u.Reactor, func(ctx context.Context) (int, error) { return f.Await(ctx) })
		if err != nil {
			return err
		}
		_, err = c.Await(waitCtx(t))
		return err
	}
}

func stuckGroup(t *testing.T, u *uv.UvtReactor) *async.Group[int] {
	g, err := async.NewGroup[int](context.Background(), u.Reactor, async.GroupOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f := pendingFuture(u)
	t.Cleanup(func() { f.Resolve(0) })
	if _, err := g.Go(func(context.Context) (int, error) { return f.Await(context.Background()) }); err != nil {
		t.Fatal(err)
	}
	return g
}

func stuckScope(t *testing.T, u *uv.UvtReactor) *async.Scope {
	s, err := async.NewScope(context.Background(), u.Reactor)
	if err != nil {
		t.Fatal(err)
	}
	f := pendingFuture(u)
	t.Cleanup(func() { f.Resolve(0) })
	if _, err := async.Go(s, func(context.Context) (int, error) { return f.Await(context.Background()) }); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestWaitEndsWithItsContext(t *testing.T) {
	ends := []struct {
		name string
		ctx  func(t *testing.T) context.Context
		want error
	}{
		{"cancelled before", func(t *testing.T) context.Context {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx
		}, context.Canceled},
		{"short deadline", func(t *testing.T) context.Context {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond) // the row cannot complete by then
			t.Cleanup(cancel)
			return ctx
		}, context.DeadlineExceeded},
	}
	for _, row := range waitRows() {
		t.Run(row.name, func(t *testing.T) {
			for _, end := range ends {
				t.Run(end.name, func(t *testing.T) {
					uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
						uv.UvtServe(t, u)
						wait := row.setup(t, u)
						if err := wait(end.ctx(t)); !errors.Is(err, end.want) {
							t.Errorf("%s = %v, want an error matching %v", row.name, err, end.want)
						}
					})
				})
			}
		})
	}
}

// The loop's own waits: Run, RunOnce and Serve, with a started timer of an
// hour keeping the loop busy (RunNoWait, which does not wait, is pinned in
// reactor's run tests; Shutdown's bound by the file and command tests).
func TestRunEndsWithItsContext(t *testing.T) {
	runs := []struct {
		name string
		run  func(r *reactor.Reactor, ctx context.Context) error
	}{
		{"Run", (*reactor.Reactor).Run},
		{"RunOnce", (*reactor.Reactor).RunOnce},
		{"Serve", (*reactor.Reactor).Serve},
	}
	for _, run := range runs {
		for _, end := range []struct {
			name   string
			cancel bool
			want   error
		}{{"cancelled before", true, context.Canceled}, {"short deadline", false, context.DeadlineExceeded}} {
			t.Run(run.name+"/"+end.name, func(t *testing.T) {
				uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
					tm, err := u.Reactor.NewTimer(time.Hour, 0)
					if err != nil {
						t.Fatal(err)
					}
					if err := tm.Start(); err != nil {
						t.Fatal(err)
					}
					defer tm.Close()
					ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
					defer cancel()
					if end.cancel {
						cancel()
					}
					if err := run.run(u.Reactor, ctx); !errors.Is(err, end.want) {
						t.Errorf("%s = %v, want an error matching %v", run.name, err, end.want)
					}
				})
			})
		}
	}
}

// Dial with a context cancelled before the call does not connect: it
// returns the context's error. (A short deadline is not in the table: a
// local connect completes before any deadline a test could rely on.)
func TestDialCancelledBeforeDoesNotConnect(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		uv.UvtServe(t, u)
		ln, err := uv.Listen(u.Reactor, "tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		c, err := uv.Dial(ctx, u.Reactor, "tcp", ln.Addr().String())
		if err == nil {
			c.Close()
		}
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Dial with a cancelled context = %v, want context.Canceled", err)
		}
	})
}

// taskPool is a task pool of one worker for one test: the default pool may
// be busy with other tests' work.
func taskPool(t *testing.T) *uv.TaskPool {
	p, err := uv.NewTaskPool(1)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
