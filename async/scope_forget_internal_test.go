package async

import (
	"context"
	"errors"
	"syscall"
	"testing"
)

// A long-lived scope (a server's, spawning one coroutine per connection)
// must not hold every coroutine it ever ran: finished ones have nothing
// left to wait for or cancel.
func TestScopeForgetsFinishedCoroutines(t *testing.T) {
	r, s := newScopeT(t)
	const n = 100
	for range n {
		if _, err := Go(s, func(context.Context) (int, error) { return 1, nil }); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := r.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	held := len(s.tasks)
	s.mu.Unlock()
	if held != 0 {
		t.Fatalf("the scope holds %d finished coroutines of %d (it grows with every coroutine ever spawned)", held, n)
	}
}

// The error of a coroutine that finished before Wait is kept for Wait, and
// returned once; a closed child that has nothing left running is forgotten
// by its parent.
func TestScopeKeepsErrorsOfForgottenCoroutines(t *testing.T) {
	r, s := newScopeT(t)
	child, _ := s.Child()
	boom := errors.New("boom")
	c, err := Go(child, func(context.Context) (int, error) { return 0, boom })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Await(context.Background()); !errors.Is(err, boom) {
		t.Fatalf("coroutine = %v", err)
	}
	if err := r.Run(context.Background()); err != nil { // delivers the outcome to the scope
		t.Fatal(err)
	}
	child.mu.Lock()
	held := len(child.tasks)
	child.mu.Unlock()
	if held != 0 {
		t.Errorf("the child holds %d finished coroutines", held)
	}
	if err := s.Wait(context.Background()); !errors.Is(err, boom) {
		t.Errorf("first Wait = %v, want boom", err)
	}
	if err := s.Wait(context.Background()); err != nil {
		t.Errorf("second Wait = %v, want nil (the error was returned once)", err)
	}
	if err := child.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	children := len(s.children)
	s.mu.Unlock()
	if children != 0 {
		t.Errorf("the parent holds %d closed children", children)
	}
}

// Close and Wait refuse a nil context with EINVAL (they used to panic), and
// the scope is left open.
func TestScopeNilContext(t *testing.T) {
	_, s := newScopeT(t)
	//lint:ignore SA1012 a nil context is the bad input under test
	if err := s.Close(nil); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("Close(nil) = %v, want EINVAL", err)
	}
	//lint:ignore SA1012 a nil context is the bad input under test
	if err := s.Wait(nil); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("Wait(nil) = %v, want EINVAL", err)
	}
	if _, err := Go(s, func(context.Context) (int, error) { return 1, nil }); err != nil {
		t.Errorf("Go after a refused Close = %v, want the scope still open", err)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Errorf("Close = %v", err)
	}
}
