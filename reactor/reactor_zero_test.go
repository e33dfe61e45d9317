package reactor_test

import (
	"context"
	"testing"

	"github.com/uvevent/uvevent/reactor"
)

// Bad input never panics (docs/architecture.md §2, rule 11), and a zero Reactor{} is bad input:
// each of its methods gives an error or does nothing.
func TestZeroReactorDoesNotPanic(t *testing.T) {
	calls := map[string]func(r *reactor.Reactor){
		"Close":     func(r *reactor.Reactor) { r.Close() },
		"Call":      func(r *reactor.Reactor) { r.Call(func() {}) },
		"Post":      func(r *reactor.Reactor) { r.Post(func() {}) },
		"RunNoWait": func(r *reactor.Reactor) { r.RunNoWait(context.Background()) },
		"Stats":     func(r *reactor.Reactor) { r.Stats() },
		"NewTimer":  func(r *reactor.Reactor) { r.NewTimer(0, 0) },
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if p := recover(); p != nil {
					t.Errorf("%s on a zero Reactor panicked: %v", name, p)
				}
			}()
			call(&reactor.Reactor{})
		})
	}
}
