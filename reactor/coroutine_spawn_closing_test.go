package reactor_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
)

// From the first moment of Close, constructors refuse with
// ErrReactorClosed (architecture §2 rule 7). Spawn and Go are constructors
// of coroutine events: called from a close notification they must refuse
// too, not start a coroutine on a reactor that is being freed.
func TestSpawnRefusedOnceCloseHasBegun(t *testing.T) {
	for name, spawn := range map[string]func(*reactor.Reactor) error{
		"Spawn": func(r *reactor.Reactor) error {
			_, err := reactor.Spawn(context.Background(), r, func(context.Context) (int, error) { return 0, nil })
			return err
		},
		"Go": func(r *reactor.Reactor) error {
			_, err := reactor.Go(context.Background(), r, func(context.Context) (int, error) { return 0, nil })
			return err
		},
	} {
		t.Run(name, func(t *testing.T) {
			r, err := reactor.New(reactor.Options{OnReport: func(event.Event, string, error) {}})
			if err != nil {
				t.Fatal(err)
			}
			tm, err := r.NewTimer(time.Hour, 0)
			if err != nil {
				t.Fatal(err)
			}
			var during error
			heard := false
			event.Subscribe(tm, func(_ event.Event, _ any, err error) {
				if errors.Is(err, event.ErrClosed) {
					heard = true
					during = spawn(r)
				}
			})
			if err := tm.Start(); err != nil {
				t.Fatal(err)
			}
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
			if !heard {
				t.Fatal("the timer's subscriber did not hear the Close")
			}
			if !errors.Is(during, reactor.ErrReactorClosed) {
				t.Errorf("%s in a close notification = %v, want ErrReactorClosed", name, during)
			}
		})
	}
}
