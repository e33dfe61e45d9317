package async

import (
	"fmt"
	"syscall"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
)

// A Timeout is an event made of a one-shot timer and a notify hook that
// turns the timer's firing into a *event.TimeoutError ("timeout occurred
// after 50ms"), which matches event.ErrTimeout and
// context.DeadlineExceeded. Put it in a wait beside other events to bound
// the wait:
//
//	outs, err := event.Await(ctx, event.Any(), reply, timeout)
//
// event.Await starts it and stops it afterwards. Like the timer it is made
// of, it is active while started (it keeps Run going, and a coroutine
// waiting on it is not deadlocked); it closes when it fires.
type Timeout struct {
	*reactor.Timer
	d time.Duration
}

// NewTimeout returns a timeout of d on r. A d ≤ 0 is refused with an error
// matching syscall.EINVAL.
func NewTimeout(r *reactor.Reactor, d time.Duration) (*Timeout, error) {
	if d <= 0 {
		return nil, fmt.Errorf("async: NewTimeout(%v): a timeout must be positive: %w", d, syscall.EINVAL)
	}
	if r == nil {
		return nil, fmt.Errorf("async: NewTimeout on a nil reactor: %w", syscall.EINVAL)
	}
	t, err := r.NewTimer(d, 0)
	if err != nil {
		return nil, err
	}
	to := &Timeout{Timer: t, d: d}
	if err := t.SetNotifyHook(to.hook); err != nil {
		return nil, err
	}
	return to, nil
}

// hook turns the firing into the timeout error; an ErrClosed (the timeout
// was closed before it fired) passes unchanged.
func (t *Timeout) hook(_ event.Event, result any, err error) (any, error, bool) {
	if err == nil {
		return nil, &event.TimeoutError{After: t.d}, true
	}
	return result, err, true
}

// Info describes the timeout, e.g. "Timeout(50ms)".
func (t *Timeout) Info() string {
	if t == nil || t.Timer == nil {
		return "event(" + event.ErrNilEvent.Error() + ")"
	}
	return fmt.Sprintf("Timeout(%v)", t.d)
}
