package waiting

import (
	"context"
	"errors"
	"testing"
)

func TestWithFrom(t *testing.T) {
	type w struct{ name string }
	ctx := With(context.Background(), &w{"coroutine 1"})
	ctx, cancel := context.WithCancel(ctx) // derived contexts carry it on
	defer cancel()
	if got, ok := From(ctx).(*w); !ok || got.name != "coroutine 1" {
		t.Errorf("From = %v", From(ctx))
	}
	if From(context.Background()) != nil {
		t.Error("a plain context carries a waiter")
	}
}

// A context bound to a waiter is that context in all else: its waiter is
// found on it and on what derives from it, other values pass through, and
// its cancellation (with its cause) reaches contexts derived from it.
func TestBindFrom(t *testing.T) {
	type w struct{ name string }
	type other struct{}
	base, cancel := context.WithCancelCause(context.WithValue(context.Background(), other{}, "kept"))
	ctx := Bind(base, &w{"coroutine 2"})
	derived, stop := context.WithCancel(ctx)
	defer stop()
	for _, c := range []context.Context{ctx, derived} {
		if got, ok := From(c).(*w); !ok || got.name != "coroutine 2" {
			t.Errorf("From = %v", From(c))
		}
		if v := c.Value(other{}); v != "kept" {
			t.Errorf("Value(other) = %v, want what the bound context carries", v)
		}
	}
	if ctx.Done() != base.Done() {
		t.Error("a bound context has a Done channel of its own")
	}
	cause := errors.New("over")
	cancel(cause)
	<-derived.Done()
	if got := context.Cause(derived); got != cause {
		t.Errorf("Cause(derived) = %v, want %v", got, cause)
	}
	if got := context.Cause(ctx); got != cause {
		t.Errorf("Cause(bound) = %v, want %v", got, cause)
	}
}

// A spare lends what it keeps to one wait at a time: while a wait has it,
// a nested wait gets nothing (and makes its own state); Put keeps the
// latest.
func TestSpare(t *testing.T) {
	var s Spare
	if v := s.Take(); v != nil {
		t.Fatalf("an empty spare gave %v", v)
	}
	a, b := new(int), new(int)
	s.Put(a)
	if v := s.Take(); v != a {
		t.Fatalf("Take = %v, want what was put", v)
	}
	if v := s.Take(); v != nil {
		t.Fatalf("a spare in use gave %v to a second wait", v)
	}
	s.Put(b) // the nested wait's state replaces it
	s.Put(a) // the outer wait puts its own back
	if v := s.Take(); v != a {
		t.Fatalf("Take = %v, want the last one put", v)
	}
}
