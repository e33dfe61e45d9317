package async

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"syscall"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
)

// A Suspension parks a goroutine until a loop callback resumes it: Suspend
// waits, and Resume(value) or Throw(err)
// from a callback (or from anywhere) wakes it with that value or error.
// It can be used again: each Suspend waits for the next Resume or Throw. A
// Resume that comes before the Suspend is kept, and the Suspend returns it
// at once. A coroutine suspended with nothing left to resume it is
// reported as deadlocked.
type Suspension[T any] struct {
	r  *reactor.Reactor
	mu sync.Mutex
	f  *event.Future[T] // the next outcome
	// takers counts the Suspends waiting on f: once f is done, each of them
	// returns its outcome, so a Resume then goes to a new future.
	takers int
}

// NewSuspension returns a suspension on r. Once r's Close has begun it
// refuses with reactor.ErrReactorClosed.
func NewSuspension[T any](r *reactor.Reactor) (*Suspension[T], error) {
	if r == nil {
		return nil, fmt.Errorf("async: NewSuspension on a nil reactor: %w", syscall.EINVAL)
	}
	if err := closing(r); err != nil {
		return nil, fmt.Errorf("async: NewSuspension: %w", err)
	}
	return &Suspension[T]{r: r, f: event.NewFuture[T](r)}, nil
}

// Suspend waits until Resume or Throw, ctx's end, or the reactor's Close.
// An outcome that comes as ctx ends is returned rather than dropped: the
// value of a Resume that succeeded is never lost.
func (s *Suspension[T]) Suspend(ctx context.Context) (T, error) {
	if !s.usable() {
		var zero T
		return zero, event.ErrNilEvent
	}
	s.mu.Lock()
	f := s.f
	s.takers++
	s.mu.Unlock()
	v, err := f.Await(ctx)
	if testHookAwaited != nil {
		testHookAwaited()
	}
	s.mu.Lock()
	if s.f == f { // else a Resume has moved on to a new future already
		s.takers--
		if f.Done() {
			s.f, s.takers = event.NewFuture[T](s.r), 0
		}
	}
	s.mu.Unlock()
	if fv, ok, ferr := f.Outcome(); ok {
		return fv, ferr
	}
	return v, err
}

// Resume wakes the suspended goroutine with v. It returns
// event.ErrCompleted when a Resume or Throw is already waiting to be taken.
func (s *Suspension[T]) Resume(v T) error {
	return s.settle(func(f *event.Future[T]) error { return f.Resolve(v) })
}

// Throw wakes the suspended goroutine with err. A nil err is refused with
// an error matching event.ErrNilError.
func (s *Suspension[T]) Throw(err error) error {
	if err == nil {
		return fmt.Errorf("async: Suspension.Throw(nil): %w", event.ErrNilError)
	}
	return s.settle(func(f *event.Future[T]) error { return f.Reject(err) })
}

// settle completes the future of the next outcome. The future found
// completed is refused only while its outcome waits to be taken: when a
// Suspend is taking it, the outcome goes to a new future, the next one.
func (s *Suspension[T]) settle(complete func(*event.Future[T]) error) error {
	if !s.usable() {
		return event.ErrNilEvent
	}
	for {
		f := s.next()
		err := complete(f)
		if !errors.Is(err, event.ErrCompleted) {
			return err
		}
		s.mu.Lock()
		again := s.f != f || s.taken()
		s.mu.Unlock()
		if !again {
			return err
		}
	}
}

// usable reports whether s is a suspension NewSuspension made: a nil or
// zero one refuses with event.ErrNilEvent.
func (s *Suspension[T]) usable() bool { return s != nil && s.r != nil && s.f != nil }

// next returns the future the next outcome goes to.
func (s *Suspension[T]) next() *event.Future[T] {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.taken() {
		s.f, s.takers = event.NewFuture[T](s.r), 0
	}
	return s.f
}

// taken reports whether a Suspend returns s.f's outcome; mu is held.
func (s *Suspension[T]) taken() bool { return s.takers > 0 && s.f.Done() }

// testHookAwaited, set by tests, runs in Suspend between the end of its wait
// and the taking of the outcome.
var testHookAwaited func()
