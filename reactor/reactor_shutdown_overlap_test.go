package reactor_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
)

// A Close waits for a busy Serve; meanwhile a Shutdown with a short context
// gives up. Giving up must not reopen the reactor under the Close still in
// progress: from the Close's first moment, constructors and Start refuse
// with ErrReactorClosed (rule 7), whatever another Shutdown does.
func TestShutdownGivingUpDoesNotReopenDuringClose(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		r, err := reactor.New(reactor.Options{Driver: d, OnReport: func(event.Event, string, error) {}})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		release := make(chan struct{})
		busy := make(chan struct{})
		tm, _ := r.NewTimer(0, 0)
		event.Subscribe(tm, func(_ event.Event, _ any, err error) {
			if err == nil {
				close(busy)
				<-release // a callback that blocks the loop: Close must wait
			}
		})
		tm.Start()
		serveDone := make(chan error, 1)
		go func() { serveDone <- r.Serve(context.Background()) }()
		select {
		case <-busy:
		case <-time.After(ownSafety):
			t.Fatal("the timer never fired")
		}
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := r.Close(); err != nil {
				t.Errorf("Close = %v", err)
			}
		}()
		// The Close has begun once a timer can no longer be made.
		deadline := time.Now().Add(ownSafety)
		for {
			if _, err := r.NewTimer(time.Hour, 0); errors.Is(err, reactor.ErrReactorClosed) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("Close never began refusing constructors")
			}
			time.Sleep(time.Millisecond)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
		serr := r.Shutdown(ctx)
		cancel()
		if !errors.Is(serr, context.DeadlineExceeded) {
			t.Errorf("short Shutdown = %v, want DeadlineExceeded", serr)
		}
		if _, err := r.NewTimer(time.Hour, 0); err == nil {
			t.Errorf("NewTimer during Close, after a short Shutdown gave up: accepted; want ErrReactorClosed")
		}
		close(release)
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(ownSafety):
			t.Fatal("Close hung")
		}
		<-serveDone
		if s := r.Stats(); s.Timers != 0 || s.Active != 0 {
			t.Errorf("after Close: Timers=%d Active=%d", s.Timers, s.Active)
		}
	})
}
