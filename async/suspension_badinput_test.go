package async_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/uvevent/uvevent/async"
	"github.com/uvevent/uvevent/event"
)

// Throw(nil) is refused with the sentinel, in words that name Throw.
func TestSuspensionThrowNilRefused(t *testing.T) {
	r, _ := newReactor(t)
	s, err := async.NewSuspension[int](r)
	if err != nil {
		t.Fatal(err)
	}
	err = s.Throw(nil)
	if !errors.Is(err, event.ErrNilError) || !strings.Contains(err.Error(), "Throw") || strings.Contains(err.Error(), "Reject") {
		t.Errorf("Throw(nil) = %v, want ErrNilError in words naming Throw", err)
	}
	if err := s.Resume(1); err != nil {
		t.Errorf("Resume after a refused Throw(nil) = %v, want the suspension untouched", err)
	}
}
