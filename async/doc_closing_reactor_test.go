package async_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/uvevent/uvevent/async"
	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
)

// Every constructor of the package refuses with ErrReactorClosed from the
// first moment of the reactor's Close: inside a close notification, and
// after Close.
func TestConstructorsRefuseClosingReactor(t *testing.T) {
	makers := map[string]func(r *reactor.Reactor) error{
		"NewChannel": func(r *reactor.Reactor) error { _, err := async.NewChannel[int](r, 1); return err },
		"NewGroup": func(r *reactor.Reactor) error {
			_, err := async.NewGroup[int](context.Background(), r, async.GroupOptions{})
			return err
		},
		"NewPool": func(r *reactor.Reactor) error {
			_, err := async.NewPool(r, async.PoolOptions[int]{Max: 1, New: func(context.Context) (int, error) { return 1, nil }})
			return err
		},
		"NewScope":      func(r *reactor.Reactor) error { _, err := async.NewScope(context.Background(), r); return err },
		"NewSuspension": func(r *reactor.Reactor) error { _, err := async.NewSuspension[int](r); return err },
		"NewTimeout":    func(r *reactor.Reactor) error { _, err := async.NewTimeout(r, time.Hour); return err },
	}
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		r, err := reactor.New(reactor.Options{Driver: d, OnReport: func(event.Event, string, error) {}})
		if err != nil {
			t.Fatal(err)
		}
		// A started timer's close notification runs inside Close.
		tm, err := r.NewTimer(time.Hour, 0)
		if err != nil {
			t.Fatal(err)
		}
		during := map[string]string{}
		if _, err := event.Subscribe(tm, func(_ event.Event, _ any, err error) {
			if !errors.Is(err, event.ErrClosed) {
				return
			}
			for name, mk := range makers {
				during[name] = verdict(mk(r))
			}
		}); err != nil {
			t.Fatal(err)
		}
		if err := tm.Start(); err != nil {
			t.Fatal(err)
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		after := map[string]string{}
		want := map[string]string{}
		for name, mk := range makers {
			after[name] = verdict(mk(r))
			want[name] = "refused"
		}
		if diff := cmp.Diff(want, during); diff != "" {
			t.Errorf("constructors inside a close notification (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(want, after); diff != "" {
			t.Errorf("constructors after Close (-want +got):\n%s", diff)
		}
	})
}

// verdict says whether err is the refusal of a closing reactor.
func verdict(err error) string {
	switch {
	case errors.Is(err, reactor.ErrReactorClosed):
		return "refused"
	case err == nil:
		return "made"
	default:
		return err.Error()
	}
}
