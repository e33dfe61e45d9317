package async

import (
	"context"
	"testing"

	"github.com/uvevent/uvevent/reactor"
)

// newReactorT returns a reactor closed at the end of the test, with a check
// that nothing is left alive.
func newReactorT(t *testing.T) *reactor.Reactor {
	t.Helper()
	r, err := reactor.New(reactor.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := r.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if st := r.Stats(); st.Coroutines != 0 || st.Active != 0 || st.Timers != 0 {
			t.Errorf("left alive after Close: %+v", st)
		}
	})
	return r
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
