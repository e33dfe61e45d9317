package event

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/uvevent/uvevent/internal/gid"
)

// An OwnerSource names the Owner that events made from it belong to: what
// NewFuture takes. A *reactor.Reactor is one (its Owner is the reactor's
// loop), and so is every Owner (its Owner is itself), a *Serial included:
// NewFuture[T](r), NewFuture[T](r.Owner()) and NewFuture[T](&serial) all
// say the same thing. A nil source, or one whose Owner is nil, names no
// owner: what is made from it refuses every operation with ErrNoOwner.
type OwnerSource interface {
	// Owner returns the owner named, or nil for none.
	Owner() Owner
}

// An Owner is the loop an event belongs to. Every change to an event's state
// is made with its owner held: directly when the caller already holds it
// (a callback running on the loop goroutine), otherwise through Call or Post.
// A reactor is the Owner of the events it runs (Reactor.Owner); Serial is
// an Owner for events that live outside any reactor. An Owner is its own
// OwnerSource: its Owner method returns itself.
//
// An Owner that keeps the count of active events and hears reports (a
// panicking callback, an unhandled error) also has the methods of
// eventkind.OwnerHooks, found by type assertion; without them, reports go
// to log/slog's default logger and no count is kept.
type Owner interface {
	OwnerSource
	// Owned reports whether the calling goroutine holds the owner now.
	Owned() bool
	// Call runs fn with the owner held and returns when fn has returned.
	Call(fn func()) error
	// Post runs fn with the owner held, later or now, without waiting.
	Post(fn func()) error
}

// ownerHooks is eventkind.OwnerHooks, the part of an Owner that events
// and kinds talk to besides Call and Post (see there).
type ownerHooks interface {
	ActiveDelta(n int)
	Report(ev Event, msg string, err error)
}

// activeDelta tells o that n non-hidden events became active or inactive,
// when o keeps that count.
func activeDelta(o Owner, n int) {
	if h, ok := o.(ownerHooks); ok {
		h.ActiveDelta(n)
	}
}

// report hands a report to o, or logs it with slog's default logger when
// o does not take reports.
func report(o Owner, ev Event, msg string, err error) {
	if h, ok := o.(ownerHooks); ok {
		h.Report(ev, msg, err)
		return
	}
	LogReport(slog.Default(), ev, msg, err)
}

// Serial is an Owner for events that live outside any reactor: each
// operation runs at once in the calling goroutine, under one lock that a
// callback running inside an operation already holds. It keeps the count
// of active events (Active) and takes reports (eventkind.OwnerHooks):
// they go to log/slog's default logger unless ReportFunc is set.
//
// The zero Serial is ready to use. A Serial must not be copied.
type Serial struct {
	mu     sync.Mutex
	holder atomic.Uintptr // gid of the goroutine holding mu, or 0
	active atomic.Int64

	// ReportFunc, when set before use, receives reports instead of slog.
	ReportFunc func(ev Event, msg string, err error)
}

// Owner returns s: a Serial is its own OwnerSource. A nil s names no
// owner (nil).
func (s *Serial) Owner() Owner {
	if s == nil {
		return nil
	}
	return s
}

// Owned reports whether the caller is inside an operation of s.
func (s *Serial) Owned() bool { return s != nil && s.holder.Load() == uintptr(gid.Current()) }

// Call runs fn under s's lock, or directly when the caller already holds it.
// A nil s refuses with ErrNoOwner, a nil fn with an error matching
// syscall.EINVAL.
func (s *Serial) Call(fn func()) error {
	if s == nil {
		return ErrNoOwner
	}
	if fn == nil {
		return errNilFunc
	}
	if s.Owned() {
		fn()
		return nil
	}
	s.mu.Lock()
	s.holder.Store(uintptr(gid.Current()))
	defer func() {
		s.holder.Store(0)
		s.mu.Unlock()
	}()
	fn()
	return nil
}

// Post is Call: a Serial has no queue.
func (s *Serial) Post(fn func()) error { return s.Call(fn) }

// ActiveDelta counts active non-hidden events (eventkind.OwnerHooks).
func (s *Serial) ActiveDelta(n int) {
	if s != nil {
		s.active.Add(int64(n))
	}
}

// Active returns the number of active non-hidden events.
func (s *Serial) Active() int {
	if s == nil {
		return 0
	}
	return int(s.active.Load())
}

// Report hands a report to ReportFunc or logs it (eventkind.OwnerHooks).
func (s *Serial) Report(ev Event, msg string, err error) {
	if s != nil && s.ReportFunc != nil {
		s.ReportFunc(ev, msg, err)
		return
	}
	LogReport(slog.Default(), ev, msg, err)
}

var errNilFunc = fmt.Errorf("event: nil function: %w", syscall.EINVAL)

// LogReport writes a report to a slog logger (slog.Default() when l is
// nil) as one record at level Error, its message "uvevent: " and msg, its
// attributes: "kind" (the event's kind, KindOf) and "event" (its Info)
// when there is an event, "err", and for a panic (a *PanicError in err's
// chain) "stack", the panicking goroutine's stack.
func LogReport(l *slog.Logger, ev Event, msg string, err error) {
	if l == nil {
		l = slog.Default()
	}
	attrs := []any{}
	if !isNil(ev) {
		info := ev.Info()
		attrs = append(attrs, slog.String("kind", kindOfInfo(info)), slog.String("event", info))
	}
	if err != nil {
		attrs = append(attrs, slog.Any("err", err))
	}
	if pe := (*PanicError)(nil); errors.As(err, &pe) && len(pe.Stack) > 0 {
		attrs = append(attrs, slog.String("stack", string(pe.Stack)))
	}
	l.Error("uvevent: "+msg, attrs...)
}
