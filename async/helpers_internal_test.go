package async

import (
	"context"
	"testing"

	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
)

// newReactorT returns a reactor closed at the end of the test, with a check
// that nothing is left alive (conform.NoneLeft).
func newReactorT(t *testing.T) *reactor.Reactor {
	t.Helper()
	return conform.NewReactor(t, reactor.Options{})
}

// newScopeT returns a reactor (see newReactorT) and a scope of it.
func newScopeT(t *testing.T) (*reactor.Reactor, *Scope) {
	t.Helper()
	r := newReactorT(t)
	s, err := NewScope(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	return r, s
}
