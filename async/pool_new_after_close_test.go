package async_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/uvevent/uvevent/async"
	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
)

// A resource that New makes although the reactor's Close has begun (a dial
// that succeeds as the context ends) has nobody to go to: it is passed to
// Destroy, not lost. The acquirer waiting for it hears ErrReactorClosed.
func TestPoolNewReturningAfterReactorClose(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		r := quietReactor(t, d)
		started, finish := make(chan struct{}), make(chan struct{})
		destroyed := make(chan int, 1)
		p, err := async.NewPool(r, async.PoolOptions[int]{
			Max: 1,
			New: func(context.Context) (int, error) {
				close(started)
				<-finish // it does not give up with its context
				return 5, nil
			},
			Destroy: func(v int) { destroyed <- v },
		})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		acq := p.Acquire()
		told := make(chan error, 1)
		if _, err := event.Subscribe(acq, func(_ event.Event, _ any, err error) { told <- err }); err != nil {
			t.Fatal(err)
		}
		if err := acq.Start(); err != nil {
			t.Fatal(err)
		}
		_, stop := serve(t, r)
		<-started
		stop()
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		if err := <-told; !errors.Is(err, reactor.ErrReactorClosed) {
			t.Errorf("the acquirer heard %v, want ErrReactorClosed", err)
		}
		close(finish)
		select {
		case v := <-destroyed:
			if v != 5 {
				t.Errorf("Destroy(%d), want Destroy(5)", v)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("the resource New made after the reactor's Close was never destroyed")
		}
	})
}
