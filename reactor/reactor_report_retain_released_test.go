package reactor_test

import (
	"errors"
	"sync"
	"testing"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
)

// A Retain after an event's last Dispose, made from goroutines other than
// the loop's while the reactor serves, is reported as OnReport promises:
// on the loop goroutine (the reactor's Owner held), once per Retain, with
// ErrReleased. OnReport here keeps its reports without a lock, as a handler
// that trusts the loop may: -race sees any report made off the loop.
func TestRetainReleasedReportedOnLoop(t *testing.T) {
	for _, d := range []reactor.Driver{reactor.DriverAuto, reactor.DriverGo} {
		var r *reactor.Reactor
		var offLoop, released int // touched by OnReport only: on the loop
		r, err := reactor.New(reactor.Options{Driver: d, OnReport: func(_ event.Event, _ string, err error) {
			if !r.Owner().Owned() {
				offLoop++
			}
			if errors.Is(err, event.ErrReleased) {
				released++
			}
		}})
		if err != nil {
			t.Fatal(err)
		}
		t.Run(r.Driver().String(), func(t *testing.T) {
			stop := serve(t, r)
			const n = 8
			futs := make([]*event.Future[int], n)
			for i := range futs {
				futs[i] = event.NewFuture[int](r)
				futs[i].Dispose() // the creator's, the last
			}
			var wg sync.WaitGroup
			for _, f := range futs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					f.Retain()
				}()
			}
			wg.Wait()
			stop()
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
			if offLoop != 0 || released != n {
				t.Errorf("reports: %d of ErrReleased (want %d), %d made off the loop goroutine (want 0)", released, n, offLoop)
			}
		})
	}
}
