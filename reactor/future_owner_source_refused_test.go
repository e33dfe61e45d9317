package reactor_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
)

// ownerlessSource names no owner.
type ownerlessSource struct{}

func (ownerlessSource) Owner() event.Owner { return nil }

// boundedErr runs fn in a goroutine and turns a panic or a hang into an
// error that names it, so that one bad case fails without stopping the rest.
func boundedErr(fn func() error) error {
	done := make(chan error, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- fmt.Errorf("panic: %v", p)
			}
		}()
		done <- fn()
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(5 * time.Second):
		return errors.New("hang: no return within 5s")
	}
}

// A future made from a source that names no usable owner (nil, a typed nil
// reactor or Serial, an OwnerSource whose Owner is nil, a zero Reactor, a
// closed reactor of either driver) refuses every operation with the
// source's error, and keeps refusing after a Resolve was refused: no
// operation panics or hangs, and Outcome never turns a refused Resolve into
// a value with a nil error.
func TestNewFutureFromUnusableSourceRefusesEveryOperation(t *testing.T) {
	type source struct {
		name string
		src  event.OwnerSource
		want error
	}
	sources := []source{
		{"nil", nil, event.ErrNoOwner},
		{"nil *Reactor", (*reactor.Reactor)(nil), event.ErrNoOwner},
		{"nil *Serial", (*event.Serial)(nil), event.ErrNoOwner},
		{"Owner() nil", ownerlessSource{}, event.ErrNoOwner},
		{"zero Reactor", &reactor.Reactor{}, reactor.ErrZeroReactor},
		{"zero Reactor's Owner", (&reactor.Reactor{}).Owner(), reactor.ErrZeroReactor},
	}
	for _, d := range []reactor.Driver{reactor.DriverAuto, reactor.DriverGo} {
		r, err := reactor.New(reactor.Options{Driver: d})
		if err != nil {
			t.Fatal(err)
		}
		name := "closed " + r.Driver().String()
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		sources = append(sources,
			source{name + " reactor", r, reactor.ErrReactorClosed},
			source{name + " reactor's Owner", r.Owner(), reactor.ErrReactorClosed})
	}
	ctx := context.Background()
	noop := func(event.Event, any, error) {}
	for _, s := range sources {
		f := event.NewFuture[int](s.src)
		ops := []struct {
			name string
			call func() error
		}{
			{"Outcome before", func() error { _, _, err := f.Outcome(); return err }},
			{"Subscribe", func() error { _, err := event.Subscribe(f, noop); return err }},
			{"Resolve", func() error { return f.Resolve(1) }},
			{"Outcome after Resolve", func() error {
				v, ok, err := f.Outcome()
				if err == nil {
					return fmt.Errorf("value %d (done %v) and a nil error", v, ok)
				}
				return err
			}},
			{"Reject", func() error { return f.Reject(errors.New("x")) }},
			{"Await", func() error { _, err := f.Await(ctx); return err }},
			{"event.Await", func() error { _, err := event.Await(ctx, event.Any(), f); return err }},
			{"Start", f.Start},
		}
		for _, op := range ops {
			if err := boundedErr(op.call); !errors.Is(err, s.want) {
				t.Errorf("%s: %s = %v, want an error matching %v", s.name, op.name, err, s.want)
			}
		}
		if err := boundedErr(func() error { f.Retain(); f.Dispose(); f.Dispose(); return f.Close() }); err != nil && !errors.Is(err, s.want) {
			t.Errorf("%s: Retain, Dispose, Close = %v", s.name, err)
		}
	}
}

// A zero Serial is a usable owner: its future completes and gives its
// value, on the caller's goroutine.
func TestNewFutureOnZeroSerialWorks(t *testing.T) {
	var s event.Serial
	f := event.NewFuture[int](&s)
	if err := f.Resolve(7); err != nil {
		t.Fatalf("Resolve = %v", err)
	}
	if v, err := f.Await(context.Background()); v != 7 || err != nil {
		t.Errorf("Await = %d, %v; want 7, nil", v, err)
	}
}

// Futures made, subscribed to and awaited from many goroutines while their
// reactor's Close runs: whether made before the Close began or refused by
// it, every Await returns (no wait hangs on a future nobody will complete)
// with an error matching ErrReactorClosed, and every subscriber is told
// exactly once. Both drivers.
func TestNewFutureRacingReactorClose(t *testing.T) {
	forEachDriver(t, func(t *testing.T, r *reactor.Reactor) {
		served := make(chan error, 1)
		go func() { served <- r.Serve(context.Background()) }()
		waitFor(t, "the loop to run", func() bool { return r.Stats().Running })
		const workers, each = 4, 50
		type result struct {
			await error
			told  int
		}
		results := make(chan result, workers*each)
		start := make(chan struct{})
		for range workers {
			go func() {
				<-start
				for range each {
					f := event.NewFuture[int](r)
					told := make(chan error, 2)
					if _, err := event.Subscribe(f, func(_ event.Event, _ any, err error) { told <- err }); err != nil {
						told <- err // refused: the reactor's Close had begun
					}
					_, err := f.Await(context.Background())
					<-told
					results <- result{await: err, told: 1 + len(told)}
				}
			}()
		}
		close(start)
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		if err := <-served; err != nil && !errors.Is(err, reactor.ErrReactorClosed) {
			t.Errorf("Serve = %v, want nil or ErrReactorClosed once Close ended it", err)
		}
		for range workers * each {
			var res result
			select {
			case res = <-results:
			case <-time.After(10 * time.Second):
				t.Fatal("an Await on a future of a closed reactor did not return")
			}
			if !errors.Is(res.await, reactor.ErrReactorClosed) {
				t.Errorf("Await = %v, want ErrReactorClosed", res.await)
			}
			if res.told != 1 {
				t.Errorf("subscriber told %d times, want once", res.told)
			}
		}
	})
}
