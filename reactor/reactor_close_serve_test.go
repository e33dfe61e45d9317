package reactor_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
)

// Close begins while an operation runs directly (no loop yet) and a Serve
// is starting: Close waits for the operation, the Serve may take the loop
// first. Rule 7 says Close stops a running Serve and waits for it: Close
// must return nil (never ErrRunning from a goroutine that is not the loop),
// and the Serve must return.
func TestCloseRacingServeStart(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		failures := 0
		const rounds = 200
		for round := 0; round < rounds; round++ {
			r, err := reactor.New(reactor.Options{Driver: d, OnReport: func(event.Event, string, error) {}})
			if err != nil {
				t.Fatal(err)
			}
			inOp := make(chan struct{})
			go r.Call(func() { close(inOp); time.Sleep(time.Millisecond) }) // a direct operation
			<-inOp
			serveDone := make(chan error, 1)
			var wg sync.WaitGroup
			var cerr error
			wg.Add(1)
			go func() { defer wg.Done(); cerr = r.Close() }()
			go func() { serveDone <- r.Serve(context.Background()) }()
			done := make(chan struct{})
			go func() { wg.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(ownSafety):
				t.Fatalf("round %d: Close hung", round)
			}
			if cerr != nil {
				failures++
				if failures == 1 {
					t.Errorf("round %d: Close racing a starting Serve = %v, want nil", round, cerr)
				}
				// Leave nothing running: a second Close must end it.
				onGoroutineOrReport(t, "second Close", func() {
					if err := r.Close(); err != nil {
						t.Errorf("round %d: second Close = %v", round, err)
					}
				})
			}
			select {
			case <-serveDone:
			case <-time.After(ownSafety):
				t.Fatalf("round %d: Serve never returned after Close", round)
			}
		}
		if failures > 0 {
			t.Errorf("Close failed in %d of %d rounds", failures, rounds)
		}
	})
}
