package conform

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
)

// The libuv habit of closing a handle from its own callback, or another
// handle whose callback is due in the same loop turn: both must leave the
// process and the reactor running, and the closed event silent but for its
// close notification.

// closesItself: a callback that closes its own event, as its first
// notification arrives, ends that event and nothing else.
func closesItself(t *testing.T, r *reactor.Reactor, k Kind) {
	ev := mustNew(t, r, k)
	fired := make(chan struct{})
	var once sync.Once
	event.Subscribe(ev, func(self event.Event, _ any, err error) {
		if errors.Is(err, event.ErrClosed) {
			return
		}
		once.Do(func() {
			if cerr := self.Close(); cerr != nil {
				t.Errorf("Close inside its own callback: %v", cerr)
			}
			close(fired)
		})
	})
	if err := ev.Start(); err != nil {
		t.Fatal(err)
	}
	stop := serve(t, r)
	defer stop()
	if k.Fire != nil {
		if err := k.Fire(ev); err != nil {
			t.Fatalf("Fire: %v", err)
		}
	}
	select {
	case <-fired:
	case <-time.After(safety):
		t.Fatal("a started event did not fire")
	}
	waitState(t, ev, event.StateClosed)
	stillRuns(t, r)
}

// closesAnother: of two events of the kind made to fire in the same loop
// turn, the callback that runs first stops and closes the other; the other
// then hears only its close notification.
func closesAnother(t *testing.T, r *reactor.Reactor, k Kind) {
	evs := [2]event.Event{mustNew(t, r, k), mustNew(t, r, k)}
	// The callbacks run on the loop goroutine (a close notification inside
	// another's Close, too); the test reads first after done, late after
	// the loop stopped.
	first := -1
	var late []error // what the closed one heard after its Close
	done := make(chan struct{})
	for i, ev := range evs {
		event.Subscribe(ev, func(_ event.Event, _ any, err error) {
			switch {
			case first == 1-i && !errors.Is(err, event.ErrClosed):
				late = append(late, err)
			case first < 0:
				first = i
				other := evs[1-i]
				if serr := other.Stop(); serr != nil {
					t.Errorf("Stop of another event inside a callback: %v", serr)
				}
				if cerr := other.Close(); cerr != nil {
					t.Errorf("Close of another event inside a callback: %v", cerr)
				}
				close(done)
			}
		})
	}
	for _, ev := range evs {
		defer ev.Close()
		if err := ev.Start(); err != nil {
			t.Fatal(err)
		}
	}
	// Both fire before the loop runs, so that their notifications are due
	// in the same turn where the kind allows it.
	if k.Fire != nil {
		for _, ev := range evs {
			if err := k.Fire(ev); err != nil {
				t.Fatalf("Fire: %v", err)
			}
		}
	}
	stop := serve(t, r)
	defer stop()
	select {
	case <-done:
	case <-time.After(safety):
		t.Fatal("neither started event fired")
	}
	waitState(t, evs[1-first], event.StateClosed)
	stillRuns(t, r)
	stop()
	if len(late) > 0 {
		t.Errorf("an event closed by another's callback was notified after its Close: %v", late)
	}
}

// stillRuns checks that the loop still runs work after what the check did.
func stillRuns(t *testing.T, r *reactor.Reactor) {
	t.Helper()
	ran := make(chan struct{})
	if err := r.Post(func() { close(ran) }); err != nil {
		t.Fatalf("Post after closing in a callback: %v", err)
	}
	select {
	case <-ran:
	case <-time.After(safety):
		t.Fatal("the loop stopped running after a close inside a callback")
	}
}
