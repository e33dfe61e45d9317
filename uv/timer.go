package uv

import (
	"time"

	"github.com/uvevent/uvevent/reactor"
)

// Timer is the timer event: one-shot (repeat 0) or periodic. It is defined
// in package reactor, whose Go-side timer wheel it lives on (so that the
// reactor's Delay and Repeat are built on the same event); see reactor.Timer
// for its methods and rules.
type Timer = reactor.Timer

// NewTimer returns a timer on r that fires timeout after Start and then, if
// repeat is not zero, every repeat. Negative durations are refused with an
// error matching syscall.EINVAL.
func NewTimer(r *reactor.Reactor, timeout, repeat time.Duration) (*Timer, error) {
	return r.NewTimer(timeout, repeat)
}
