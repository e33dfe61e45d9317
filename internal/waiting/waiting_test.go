package waiting

import (
	"context"
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
