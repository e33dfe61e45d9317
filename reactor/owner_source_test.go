package reactor_test

import (
	"testing"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
)

// A reactor is an event.OwnerSource: event.NewFuture takes the reactor
// itself, its Owner, or a Serial, and the future belongs to the owner
// named, on both drivers.
func TestNewFutureTakesReactorOwnerAndSerial(t *testing.T) {
	forEachDriver(t, func(t *testing.T, r *reactor.Reactor) {
		stop := serve(t, r)
		defer stop()
		var serial event.Serial
		for _, tc := range []struct {
			name string
			src  event.OwnerSource
			want event.Owner
		}{
			{"reactor", r, r.Owner()},
			{"reactor's Owner", r.Owner(), r.Owner()},
			{"Serial", &serial, &serial},
		} {
			f := event.NewFuture[int](tc.src)
			if got := event.OwnerOf(f); got != tc.want {
				t.Errorf("%s: the future's owner = %v, want %v", tc.name, got, tc.want)
			}
			go f.Resolve(7)
			if v, err := f.Await(runCtx(t)); v != 7 || err != nil {
				t.Errorf("%s: Await = %d, %v; want 7, nil", tc.name, v, err)
			}
		}
	})
}
