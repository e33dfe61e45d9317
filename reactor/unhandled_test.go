package reactor_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
)

// A coroutine whose error nobody takes is reported once, at the end of the
// loop turn in which it failed, with the line that spawned it; one made
// off the loop is its maker's to read, and reported only when collected
// unread; a coroutine ended by its own context is not reported.

var errUnread = errors.New("nobody reads this")

// nextLine returns "dir/file.go:line" of the line after its caller's, as
// spawn sites read.
func nextLine() string {
	_, file, n, _ := runtime.Caller(1)
	return fmt.Sprintf("%s/%s:%d", filepath.Base(filepath.Dir(file)), filepath.Base(file), n+1)
}

func must[T any](c *reactor.Coroutine[T], err error) *reactor.Coroutine[T] {
	if err != nil {
		panic(err)
	}
	return c
}

func failing(context.Context) (int, error) { return 0, errUnread }

// spawners are the two ways to make a coroutine.
var spawners = []struct {
	name  string
	spawn func(context.Context, *reactor.Reactor, func(context.Context) (int, error)) (*reactor.Coroutine[int], error)
}{
	{"Spawn", reactor.Spawn[int]},
	{"Go", reactor.Go[int]},
}

// unhandled returns the "unhandled error" reports among rep's, as
// (message, site, error message) triples.
func unhandled(rep *reports) []string {
	var out []string
	msgs, errs := rep.snapshot()
	for i, m := range msgs {
		var ue *event.UnhandledError
		if errors.As(errs[i], &ue) {
			out = append(out, fmt.Sprintf("%s: %v at %s", m, ue.Err, ue.Site))
		} else if m == "unhandled error" || m == "unhandled error of a collected coroutine" {
			out = append(out, fmt.Sprintf("%s: %v", m, errs[i]))
		}
	}
	return out
}

// onLoop runs body in a cooperative coroutine of r (on the loop while Run
// drives it), runs r until idle, and returns the unhandled reports.
func onLoop(t *testing.T, r *reactor.Reactor, rep *reports, body func(ctx context.Context)) []string {
	t.Helper()
	ctx := runCtx(t)
	if _, err := reactor.Spawn(ctx, r, func(ctx context.Context) (int, error) {
		body(ctx)
		return 0, nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := r.Run(ctx); err != nil {
		t.Fatal(err)
	}
	return unhandled(rep)
}

// noneReported runs body on the loop of a new reactor of driver d (see
// onLoop) and checks that nothing was reported unhandled.
func noneReported(t *testing.T, d reactor.Driver, body func(ctx context.Context, r *reactor.Reactor)) {
	t.Helper()
	r, rep := newReportingReactor(t, d)
	if got := onLoop(t, r, rep, func(ctx context.Context) { body(ctx, r) }); len(got) != 0 {
		t.Errorf("reports: %q, want none", got)
	}
}

func newReportingReactor(t *testing.T, d reactor.Driver) (*reactor.Reactor, *reports) {
	rep := &reports{}
	return conform.NewReactor(t, reactor.Options{Driver: d, OnReport: rep.add}), rep
}

func TestUnhandledCoroutineReportedAtTurnEnd(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		for _, sp := range spawners {
			t.Run(sp.name, func(t *testing.T) {
				r, rep := newReportingReactor(t, d)
				var site string
				got := onLoop(t, r, rep, func(ctx context.Context) {
					site = nextLine()
					must(sp.spawn(ctx, r, failing))
				})
				want := []string{"unhandled error: " + errUnread.Error() + " at " + site}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("reports after Run, no collection (-want +got):\n%s", diff)
				}
				// Once: neither a collection nor the close repeats it.
				runtime.GC()
				runtime.GC()
				if err := r.Close(); err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(want, unhandled(rep)); diff != "" {
					t.Errorf("reports after Close (-want +got):\n%s", diff)
				}
			})
		}
	})
}

// The report comes at the end of the turn of the failure, before the next
// turn: a RunOnce that runs the failure has made it when it returns.
func TestUnhandledCoroutineReportedBeforeNextTurn(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		r, rep := newReportingReactor(t, d)
		ctx := runCtx(t)
		var child *reactor.Coroutine[int]
		must(reactor.Spawn(ctx, r, func(ctx context.Context) (int, error) {
			child = must(reactor.Spawn(ctx, r, failing))
			return 0, nil
		}))
		for child == nil || !child.Done() {
			if err := r.RunOnce(ctx); err != nil {
				t.Fatal(err)
			}
		}
		if got := len(unhandled(rep)); got != 1 {
			t.Errorf("%d unhandled reports when the turn that failed it returned, want 1", got)
		}
		if err := r.Run(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

func TestUnhandledCoroutineTakenInTurnIsNotReported(t *testing.T) {
	takers := []struct {
		name string
		take func(t *testing.T, ctx context.Context, r *reactor.Reactor, c *reactor.Coroutine[int])
	}{
		{"OnDone", func(t *testing.T, _ context.Context, _ *reactor.Reactor, c *reactor.Coroutine[int]) {
			if _, err := event.On[int](c, func(int, error) {}); err != nil {
				t.Error(err)
			}
		}},
		{"Await", func(t *testing.T, ctx context.Context, _ *reactor.Reactor, c *reactor.Coroutine[int]) {
			if _, err := c.Await(ctx); !errors.Is(err, errUnread) {
				t.Errorf("Await: %v, want %v", err, errUnread)
			}
		}},
		{"OutcomeInSameTurn", func(t *testing.T, ctx context.Context, r *reactor.Reactor, c *reactor.Coroutine[int]) {
			// A sibling made after c runs after it in the same pass.
			must(reactor.Spawn(ctx, r, func(context.Context) (int, error) {
				if _, ok, err := c.Outcome(); ok && !errors.Is(err, errUnread) {
					t.Errorf("Outcome: %v, want %v", err, errUnread)
				} else if !ok {
					t.Error("Outcome: not done")
				}
				return 0, nil
			}))
		}},
	}
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		for _, sp := range spawners {
			for _, tk := range takers {
				if sp.name == "Go" && tk.name == "OutcomeInSameTurn" {
					continue // a parallel coroutine's end is not ordered with its sibling's start
				}
				t.Run(sp.name+"/"+tk.name, func(t *testing.T) {
					noneReported(t, d, func(ctx context.Context, r *reactor.Reactor) {
						tk.take(t, ctx, r, must(sp.spawn(ctx, r, failing)))
					})
				})
			}
		}
	})
}

func TestCancelledCoroutineIsNotReported(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		for _, sp := range spawners {
			t.Run(sp.name, func(t *testing.T) {
				noneReported(t, d, func(ctx context.Context, r *reactor.Reactor) {
					never := event.NewFuture[int](r)
					c := must(sp.spawn(ctx, r, func(ctx context.Context) (int, error) {
						return never.Await(ctx)
					}))
					c.Cancel()
					// A parent context cancelled by the program, too.
					pctx, cancel := context.WithCancel(ctx)
					must(sp.spawn(pctx, r, func(ctx context.Context) (int, error) {
						<-ctx.Done()
						return 0, ctx.Err()
					}))
					cancel()
				})
			})
		}
	})
}

// A coroutine made off the loop is its maker's: it may read it after the
// turn of the failure, and nothing is reported.
func TestOffLoopCoroutineAwaitedLaterIsNotReported(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		for _, sp := range spawners {
			t.Run(sp.name, func(t *testing.T) {
				r, rep := newReportingReactor(t, d)
				ctx := runCtx(t)
				c := must(sp.spawn(ctx, r, failing))
				if err := r.Run(ctx); err != nil {
					t.Fatal(err)
				}
				runtime.GC()
				if _, err := c.Await(ctx); !errors.Is(err, errUnread) {
					t.Errorf("Await: %v, want %v", err, errUnread)
				}
				if err := r.Close(); err != nil {
					t.Fatal(err)
				}
				runtime.GC()
				runtime.GC()
				if got := unhandled(rep); len(got) != 0 {
					t.Errorf("reports: %q, want none", got)
				}
			})
		}
	})
}

// spawnAndDrop makes a failing coroutine of r off the loop and drops it.
//
//go:noinline
func spawnAndDrop(ctx context.Context, r *reactor.Reactor) (site string) {
	site = nextLine()
	must(reactor.Go(ctx, r, failing))
	return site
}

// One made off the loop and dropped unread is reported when collected,
// with its site.
func TestOffLoopCoroutineDroppedIsReportedWhenCollected(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		r, rep := newReportingReactor(t, d)
		ctx := runCtx(t)
		site := spawnAndDrop(ctx, r)
		if err := r.Run(ctx); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the report of the collected coroutine", func() bool {
			runtime.GC()
			r.RunNoWait(ctx)
			return len(unhandled(rep)) > 0
		})
		want := []string{"unhandled error of a collected coroutine: " + errUnread.Error() + " at " + site}
		if diff := cmp.Diff(want, unhandled(rep)); diff != "" {
			t.Errorf("reports (-want +got):\n%s", diff)
		}
	})
}
