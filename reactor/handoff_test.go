package reactor_test

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"sync"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
)

// newHandoff makes a handoff of r or fails the test.
func newHandoff[T any](t *testing.T, r *reactor.Reactor) *event.Handoff[T] {
	t.Helper()
	h, err := event.NewHandoff[T](r)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// Two cooperative coroutines hand values back and forth through two
// handoffs: every value arrives, once and in order, and both handoffs are
// empty and open at the end, on either driver.
func TestHandoffPingPong(t *testing.T) {
	forEachDriver(t, func(t *testing.T, r *reactor.Reactor) {
		ctx := runCtx(t)
		toA, toB := newHandoff[int](t, r), newHandoff[int](t, r)
		const n = 1000
		var gotA, gotB []int // each written by its coroutine only
		a, _ := reactor.Spawn(ctx, r, func(ctx context.Context) (int, error) {
			for i := range n {
				if err := toB.Resolve(i); err != nil {
					return i, err
				}
				v, err := toA.Await(ctx)
				if err != nil {
					return i, err
				}
				gotA = append(gotA, v)
			}
			return n, nil
		})
		b, _ := reactor.Spawn(ctx, r, func(ctx context.Context) (int, error) {
			for i := range n {
				v, err := toB.Await(ctx)
				if err != nil {
					return i, err
				}
				gotB = append(gotB, v)
				if err := toA.Resolve(v * 2); err != nil {
					return i, err
				}
			}
			return n, nil
		})
		if err := r.Run(ctx); err != nil {
			t.Fatal(err)
		}
		for _, c := range []*reactor.Coroutine[int]{a, b} {
			if v, ok, err := c.Outcome(); v != n || !ok || err != nil {
				t.Fatalf("a coroutine ended with %d, %t, %v; want %d", v, ok, err, n)
			}
		}
		wantA, wantB := make([]int, n), make([]int, n)
		for i := range n {
			wantA[i], wantB[i] = 2*i, i
		}
		if d := cmp.Diff(wantA, gotA); d != "" {
			t.Errorf("values back (-want +got):\n%s", d)
		}
		if d := cmp.Diff(wantB, gotB); d != "" {
			t.Errorf("values out (-want +got):\n%s", d)
		}
		for _, h := range []*event.Handoff[int]{toA, toB} {
			if got := h.Info(); got != "Handoff(empty)" {
				t.Errorf("Info after the exchange = %q, want Handoff(empty)", got)
			}
		}
	})
}

// An outcome with nobody to take it is kept, refuses a second one, and
// goes to the next wait at once; then the handoff is empty and takes the
// next outcome; an error goes the same way.
func TestHandoffKeepsOneOutcome(t *testing.T) {
	forEachDriver(t, func(t *testing.T, r *reactor.Reactor) {
		ctx := runCtx(t)
		h := newHandoff[string](t, r)
		if err := h.Resolve("first"); err != nil {
			t.Fatal(err)
		}
		if err := h.Resolve("second"); !errors.Is(err, event.ErrCompleted) {
			t.Fatalf("a second Resolve while one is kept = %v, want ErrCompleted", err)
		}
		if err := h.Reject(errors.New("x")); !errors.Is(err, event.ErrCompleted) {
			t.Fatalf("a Reject while one is kept = %v, want ErrCompleted", err)
		}
		if v, ok, err := h.Outcome(); v != "first" || !ok || err != nil {
			t.Fatalf("Outcome = %q, %t, %v; want first, true, nil", v, ok, err)
		}
		if got := h.Info(); got != "Handoff(holding a value)" {
			t.Errorf("Info = %q", got)
		}
		// From a plain goroutine (no coroutine: the general wait).
		if v, err := h.Await(ctx); v != "first" || err != nil {
			t.Fatalf("Await = %q, %v; want first", v, err)
		}
		if _, ok, _ := h.Outcome(); ok {
			t.Fatal("the outcome is still kept after a wait took it")
		}
		boom := errors.New("boom")
		if err := h.Reject(boom); err != nil {
			t.Fatal(err)
		}
		if got := h.Info(); got != "Handoff(holding an error: boom)" {
			t.Errorf("Info = %q", got)
		}
		c, _ := reactor.Spawn(ctx, r, func(ctx context.Context) (string, error) {
			if _, err := h.Await(ctx); !errors.Is(err, boom) { // the coroutine's fast path
				return "", err
			}
			return h.Await(ctx) // empty: waits for the goroutine's Resolve below
		})
		release, err := r.Hold() // the goroutine below, which the reactor cannot see, will resolve it
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			defer release()
			for {
				err := h.Resolve("third")
				if !errors.Is(err, event.ErrCompleted) { // the error not yet taken: again
					if err != nil {
						t.Error(err)
					}
					return
				}
			}
		}()
		if err := r.Run(ctx); err != nil {
			t.Fatal(err)
		}
		if v, ok, err := c.Outcome(); v != "third" || !ok || err != nil {
			t.Fatalf("coroutine = %q, %t, %v; want third", v, ok, err)
		}
	})
}

// A subscriber is told of every outcome, as a T; the handoff stays open
// between them. One that subscribes while an outcome is kept is told of
// it. A subscriber that resolves the handoff again in its own notification
// hears that outcome next, after its pass.
func TestHandoffSubscribers(t *testing.T) {
	forEachDriver(t, func(t *testing.T, r *reactor.Reactor) {
		h := newHandoff[int](t, r)
		if err := h.Resolve(1); err != nil { // kept: nobody subscribed
			t.Fatal(err)
		}
		type heard struct {
			V   any
			Err string
		}
		var got []heard // loop-owned
		boom := errors.New("boom")
		_, err := event.Subscribe(h, func(_ event.Event, v any, err error) {
			e := ""
			if err != nil {
				e = err.Error()
			}
			got = append(got, heard{v, e})
			if v == 2 {
				if err := h.Resolve(3); err != nil { // inside the pass
					t.Error(err)
				}
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		ctx := runCtx(t)
		tm, _ := r.NewTimer(0, 0)
		step := 0
		tm.OnFire(func(error) {
			switch step++; step {
			case 1:
				h.Resolve(2)
			case 2:
				h.Reject(boom)
			}
			if step < 3 {
				tm.Start()
			} else {
				h.Close()
			}
		})
		tm.Start()
		if err := r.Run(ctx); err != nil {
			t.Fatal(err)
		}
		want := []heard{{1, ""}, {2, ""}, {3, ""}, {nil, "boom"}, {nil, event.ErrClosed.Error()}}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("notifications (-want +got):\n%s", d)
		}
		if got := h.Info(); got != "Handoff(empty, closed)" {
			t.Errorf("Info = %q", got)
		}
		// Closed, it keeps one more outcome for a wait, as a future
		// closed early keeps its value.
		if err := h.Resolve(4); err != nil {
			t.Errorf("Resolve after Close = %v, want nil", err)
		}
		if err := h.Resolve(5); !errors.Is(err, event.ErrCompleted) {
			t.Errorf("a second Resolve after Close = %v, want ErrCompleted", err)
		}
		if v, err := h.Await(ctx); v != 4 || err != nil {
			t.Errorf("Await after Close = %d, %v; want 4", v, err)
		}
		if _, err := h.Await(ctx); !errors.Is(err, event.ErrClosed) {
			t.Errorf("Await on the closed, empty handoff = %v, want ErrClosed", err)
		}
	})
}

// An outcome kept when the handoff closes goes to one more wait; after
// that a wait ends with ErrClosed.
func TestHandoffClosedKeepsItsOutcome(t *testing.T) {
	forEachDriver(t, func(t *testing.T, r *reactor.Reactor) {
		ctx := runCtx(t)
		h := newHandoff[int](t, r)
		h.Resolve(7)
		h.Close()
		if v, err := h.Await(ctx); v != 7 || err != nil {
			t.Fatalf("first wait after Close = %d, %v; want 7", v, err)
		}
		if _, err := h.Await(ctx); !errors.Is(err, event.ErrClosed) {
			t.Fatalf("second wait after Close = %v, want ErrClosed", err)
		}
	})
}

// The reactor's Close ends a coroutine's wait on a handoff, and closes a
// handoff with subscribers, who hear ErrReactorClosed; a coroutine waiting
// on a handoff nobody else can resolve is a deadlock.
func TestHandoffReactorEnds(t *testing.T) {
	forEachDriver(t, func(t *testing.T, r *reactor.Reactor) {
		ctx := runCtx(t)
		h := newHandoff[int](t, r)
		c, _ := reactor.Spawn(ctx, r, func(ctx context.Context) (int, error) { return h.Await(ctx) })
		if err := r.Run(ctx); err != nil {
			t.Fatal(err)
		}
		if _, _, err := c.Outcome(); !errors.Is(err, event.ErrDeadlock) {
			t.Fatalf("a wait nothing can end = %v, want ErrDeadlock", err)
		}
		var heard error
		event.Subscribe(h, func(_ event.Event, _ any, err error) { heard = err })
		release, _ := r.Hold() // someone outside will resolve it: no deadlock
		defer release()
		w, _ := reactor.Spawn(ctx, r, func(ctx context.Context) (int, error) { return h.Await(ctx) })
		served := make(chan error, 1)
		go func() { served <- r.Serve(ctx) }()
		waitFor(t, "the coroutine to wait", func() bool { return r.Stats().Waiting == 1 })
		r.Close()
		<-served
		waitFor(t, "the coroutine to end", w.Done)
		if _, _, err := w.Outcome(); !errors.Is(err, reactor.ErrReactorClosed) {
			t.Errorf("a wait at the reactor's Close = %v, want ErrReactorClosed", err)
		}
		if !errors.Is(heard, event.ErrClosed) || !errors.Is(heard, reactor.ErrReactorClosed) {
			t.Errorf("a subscriber at the reactor's Close heard %v, want ErrClosed and ErrReactorClosed", heard)
		}
		if _, err := event.NewHandoff[int](r); !errors.Is(err, reactor.ErrReactorClosed) {
			t.Errorf("NewHandoff on a closed reactor = %v, want ErrReactorClosed", err)
		}
	})
}

// Bad and zero input is refused, never a panic.
func TestHandoffBadInput(t *testing.T) {
	if h, err := event.NewHandoff[int](nil); h != nil || !errors.Is(err, event.ErrNoOwner) || !errors.Is(err, syscall.EINVAL) {
		t.Errorf("NewHandoff(nil) = %v, %v; want ErrNoOwner and EINVAL", h, err)
	}
	if h, err := event.NewHandoff[int]((*reactor.Reactor)(nil)); h != nil || !errors.Is(err, event.ErrNoOwner) {
		t.Errorf("NewHandoff of a nil reactor = %v, %v; want ErrNoOwner", h, err)
	}
	ctx := context.Background()
	for name, h := range map[string]*event.Handoff[int]{"nil": nil, "zero": {}} {
		if err := h.Resolve(1); !errors.Is(err, event.ErrNilEvent) {
			t.Errorf("%s Resolve = %v", name, err)
		}
		if err := h.Reject(errors.New("x")); !errors.Is(err, event.ErrNilEvent) {
			t.Errorf("%s Reject = %v", name, err)
		}
		if _, err := h.Await(ctx); !errors.Is(err, event.ErrNilEvent) {
			t.Errorf("%s Await = %v", name, err)
		}
		if _, ok, err := h.Outcome(); ok || err != nil {
			t.Errorf("%s Outcome = %t, %v", name, ok, err)
		}
	}
	forEachDriver(t, func(t *testing.T, r *reactor.Reactor) {
		h := newHandoff[int](t, r)
		if err := h.Reject(nil); !errors.Is(err, event.ErrNilError) {
			t.Errorf("Reject(nil) = %v, want ErrNilError", err)
		}
		if err := h.Settle(1, nil); err != nil {
			t.Errorf("Settle(1, nil) = %v", err)
		}
		//lint:ignore SA1012 the nil context is the bad input under test
		if _, err := h.Await(nil); err == nil {
			t.Error("Await(nil) succeeded")
		}
		if err := h.Start(); err != nil {
			t.Errorf("Start = %v, want nil (it does nothing)", err)
		}
		if err := h.Stop(); err != nil {
			t.Errorf("Stop = %v, want nil", err)
		}
	})
}

// A kept error nobody took is reported as unhandled when the handoff is
// disposed.
func TestHandoffDisposedWithAnError(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		rep := &reports{}
		r := conform.NewReactor(t, reactor.Options{Driver: d, OnReport: rep.add})
		h := newHandoff[int](t, r)
		boom := errors.New("boom")
		h.Reject(boom)
		h.Dispose()
		msgs, errs := rep.snapshot()
		if !slices.Contains(msgs, "unhandled error") || !slices.ContainsFunc(errs, func(e error) bool { return errors.Is(e, boom) }) {
			t.Errorf("reports %q %v; want the unhandled boom", msgs, errs)
		}
	})
}

// Many goroutines resolve one handoff at once while a parallel coroutine
// takes outcomes: each accepted value is taken exactly once, every refused
// Resolve says ErrCompleted. Run with -race.
func TestHandoffConcurrentResolvers(t *testing.T) {
	forEachDriver(t, func(t *testing.T, r *reactor.Reactor) {
		defer serve(t, r)()
		ctx := runCtx(t)
		h := newHandoff[int](t, r)
		const senders, each = 4, 200
		release, err := r.Hold() // the senders, which the reactor cannot see, resolve it
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		defer wg.Wait()
		for s := range senders {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < each; {
					switch err := h.Resolve(s*each + i); {
					case err == nil:
						i++
					case errors.Is(err, event.ErrCompleted):
						runtime.Gosched() // one is kept: let the taker run
					default:
						t.Error(err)
						return
					}
				}
			}()
		}
		go func() { wg.Wait(); release() }()
		taker, _ := reactor.Go(ctx, r, func(ctx context.Context) ([]int, error) {
			var got []int
			for range senders * each {
				v, err := h.Await(ctx)
				if err != nil {
					return got, err
				}
				got = append(got, v)
			}
			return got, nil
		})
		got, err := taker.Await(ctx)
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(got)
		want := make([]int, senders*each)
		for i := range want {
			want[i] = i
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("values taken (-want +got):\n%s", d)
		}
	})
}

// A Resolve by the coroutine holding the baton hands its value straight to
// the other coroutine's wait (no notification pass): until that coroutine
// has run and read it, the handoff holds it, refusing another outcome, and
// the waiter gets the first value, once.
func TestHandoffHandedOverUntilRead(t *testing.T) {
	forEachDriver(t, func(t *testing.T, r *reactor.Reactor) {
		ctx := runCtx(t)
		h := newHandoff[int](t, r)
		waiter, _ := reactor.Spawn(ctx, r, func(ctx context.Context) (int, error) {
			return h.Await(ctx) // parks first: the resolver runs after it
		})
		var second error
		var info string
		resolver, _ := reactor.Spawn(ctx, r, func(ctx context.Context) (int, error) {
			if err := h.Resolve(1); err != nil {
				return 0, err
			}
			second = h.Resolve(2) // the waiter has not run yet
			info = h.Info()
			return 0, nil
		})
		if err := r.Run(ctx); err != nil {
			t.Fatal(err)
		}
		if _, _, err := resolver.Outcome(); err != nil {
			t.Fatal(err)
		}
		if !errors.Is(second, event.ErrCompleted) {
			t.Errorf("a second Resolve before the waiter read the first = %v, want ErrCompleted", second)
		}
		if info != "Handoff(empty)" { // handed over: not kept for a later wait or Replay
			t.Errorf("Info while handed over = %q, want Handoff(empty)", info)
		}
		if v, ok, err := waiter.Outcome(); v != 1 || !ok || err != nil {
			t.Errorf("waiter = %d, %t, %v; want 1", v, ok, err)
		}
		if got := h.Info(); got != "Handoff(empty)" {
			t.Errorf("Info at the end = %q, want Handoff(empty)", got)
		}
		if err := h.Resolve(3); err != nil {
			t.Errorf("Resolve once the value was read = %v", err)
		}
	})
}
