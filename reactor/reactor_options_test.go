package reactor_test

import (
	"errors"
	"syscall"
	"testing"

	"github.com/uvevent/uvevent/reactor"
)

// A Driver that is none of the three is refused, not taken as libuv.
func TestNewRefusesUnknownDriver(t *testing.T) {
	for _, d := range []reactor.Driver{3, 99, 255} {
		r, err := reactor.New(reactor.Options{Driver: d})
		if err == nil {
			r.Close()
		}
		if !errors.Is(err, syscall.EINVAL) {
			t.Errorf("New(Driver: %d) = %v, want an error matching EINVAL", d, err)
		}
	}
}

// A timer on a zero Reactor (one New did not make) is refused.
func TestNewTimerRefusesZeroReactor(t *testing.T) {
	if _, err := (&reactor.Reactor{}).NewTimer(0, 0); !errors.Is(err, reactor.ErrZeroReactor) {
		t.Errorf("NewTimer on a zero Reactor = %v, want ErrZeroReactor", err)
	}
}
