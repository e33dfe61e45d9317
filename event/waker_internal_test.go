package event

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/uvevent/uvevent/internal/waiting"
)

// grabWaiter takes the waker's callback out of the events' vectors while
// Await waits (only an in-package test can see it), then runs then.
type grabWaiter struct {
	cbs  []*Callback
	then func(abort func(error))
}

func (g *grabWaiter) BeginWait(events []Event, ws waiting.State) {
	seen := map[*Base]bool{}
	for _, ev := range events {
		b := ev.base()
		if !seen[b] {
			seen[b] = true
			b.exec(func() { g.cbs = append(g.cbs, b.cbs.all()...) })
		}
	}
	if g.then != nil {
		g.then(ws.Abort)
	}
}

func (g *grabWaiter) EndWait() {}

// TestAwaitReleasesItsCallback: however a wait ends, the waker's callback
// leaves every vector and its last reference is released.
func TestAwaitReleasesItsCallback(t *testing.T) {
	boom := errors.New("boom")
	for _, tc := range []struct {
		name string
		mode Mode
		do   func(a, b *Future[any], abort func(error))
		want error
	}{
		{"resolved", Any(), func(a, _ *Future[any], _ func(error)) { a.Resolve(1) }, nil},
		{"rejected", All(), func(a, b *Future[any], _ func(error)) { a.Reject(boom); b.Resolve(2) }, boom},
		{"timeout", Any().Within(time.Millisecond), func(*Future[any], *Future[any], func(error)) {}, ErrTimeout},
		{"aborted", Any(), func(_, _ *Future[any], abort func(error)) { abort(ErrDeadlock) }, ErrDeadlock},
	} {
		s := &Serial{}
		a, b := NewFuture[any](s), NewFuture[any](s)
		g := &grabWaiter{then: func(abort func(error)) { tc.do(a, b, abort) }}
		_, err := Await(waiting.With(context.Background(), g), tc.mode, a, b, a)
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: Await = %v, want %v", tc.name, err, tc.want)
		}
		if len(g.cbs) != 3 {
			t.Fatalf("%s: Await subscribed %d times, want 3 (one per listed event)", tc.name, len(g.cbs))
		}
		for i, cb := range g.cbs {
			if cb != g.cbs[0] {
				t.Errorf("%s: Await used several callbacks", tc.name)
			}
			if n := cb.Refs(); n != 0 {
				t.Errorf("%s: the waker's callback (subscription %d) keeps %d references", tc.name, i, n)
			}
		}
		if subscribers(a)+subscribers(b) != 0 {
			t.Errorf("%s: subscribers left behind", tc.name)
		}
	}
}
