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
// waiting on it is not deadlocked); it is stopped when it fires, as its
// timer is, and a wait that comes later (until it is started again) gets
// the timeout error at once.
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
	if t.zero() {
		return "event(" + event.ErrNilEvent.Error() + ")"
	}
	return fmt.Sprintf("Timeout(%v)", t.d)
}

// The event methods below are declared on Timeout rather than promoted from
// the *reactor.Timer it embeds: in a zero Timeout that pointer is nil, and a
// promoted call would panic in Go's own method wrapper. Each refuses a zero
// Timeout as the other zero values are refused: an error matching
// event.ErrNilEvent, or nothing for the methods without an error. The
// timer's own methods (Reset, Again, DueIn, ...) refuse a nil timer
// themselves.

// zero reports a Timeout that NewTimeout did not make.
func (t *Timeout) zero() bool { return t.Timer == nil }

// AddCallback subscribes cb (see event.Event).
func (t *Timeout) AddCallback(cb *event.Callback) error {
	if t.zero() {
		return event.ErrNilEvent
	}
	return t.Timer.AddCallback(cb)
}

// DelCallback unsubscribes cb (see event.Event).
func (t *Timeout) DelCallback(cb *event.Callback) error {
	if t.zero() {
		return event.ErrNilEvent
	}
	return t.Timer.DelCallback(cb)
}

// Start starts the timeout; event.Await does it for the events it waits on.
func (t *Timeout) Start() error {
	if t.zero() {
		return event.ErrNilEvent
	}
	return t.Timer.Start()
}

// Stop stops the timeout (see event.Event).
func (t *Timeout) Stop() error {
	if t.zero() {
		return event.ErrNilEvent
	}
	return t.Timer.Stop()
}

// Replay refuses: a timeout stores no result (see event.Event).
func (t *Timeout) Replay(cb *event.Callback) error {
	if t.zero() {
		return event.ErrNilEvent
	}
	return t.Timer.Replay(cb)
}

// Close closes the timeout; its subscribers hear event.ErrClosed.
func (t *Timeout) Close() error {
	if t.zero() {
		return event.ErrNilEvent
	}
	return t.Timer.Close()
}

// Retain adds a reference (see event.Event).
func (t *Timeout) Retain() {
	if !t.zero() {
		t.Timer.Retain()
	}
}

// Dispose drops a reference; the last one closes the timeout.
func (t *Timeout) Dispose() {
	if !t.zero() {
		t.Timer.Dispose()
	}
}

// Flags returns the timeout's flags, 0 for a zero Timeout.
func (t *Timeout) Flags() event.Flags {
	if t.zero() {
		return 0
	}
	return t.Timer.Flags()
}

// SetNotifyHook replaces the hook that makes the firing a timeout error
// (nil removes it): the timeout then fires as a plain timer.
func (t *Timeout) SetNotifyHook(h event.NotifyHook) error {
	if t.zero() {
		return event.ErrNilEvent
	}
	return t.Timer.SetNotifyHook(h)
}

// SetObject records an owning object (see event.Base).
func (t *Timeout) SetObject(o any) error {
	if t.zero() {
		return event.ErrNilEvent
	}
	return t.Timer.SetObject(o)
}

// Object returns the owning object recorded by SetObject, or nil.
func (t *Timeout) Object() any {
	if t.zero() {
		return nil
	}
	return t.Timer.Object()
}

// SetHidden marks the timeout hidden or not (see event.Base.SetHidden).
func (t *Timeout) SetHidden(hidden bool) error {
	if t.zero() {
		return event.ErrNilEvent
	}
	return t.Timer.SetHidden(hidden)
}

// MarkErrorHandled sets event.ErrorHandled (see event.Base).
func (t *Timeout) MarkErrorHandled() {
	if !t.zero() {
		t.Timer.MarkErrorHandled()
	}
}
