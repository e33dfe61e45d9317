package async

import (
	"context"
	"fmt"
	"sync"
	"syscall"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
)

// A Suspension parks a goroutine until a loop callback resumes it, the
// seed's suspend/resume: Suspend waits, and Resume(value) or Throw(err)
// from a callback (or from anywhere) wakes it with that value or error.
// It can be used again: each Suspend waits for the next Resume or Throw. A
// Resume that comes before the Suspend is kept, and the Suspend returns it
// at once. A coroutine suspended with nothing left to resume it is
// reported as deadlocked.
type Suspension[T any] struct {
	r  *reactor.Reactor
	mu sync.Mutex
	f  *event.Future[T] // the next outcome
}

// NewSuspension returns a suspension on r.
func NewSuspension[T any](r *reactor.Reactor) (*Suspension[T], error) {
	if r == nil {
		return nil, fmt.Errorf("async: NewSuspension on a nil reactor: %w", syscall.EINVAL)
	}
	return &Suspension[T]{r: r, f: event.NewFuture[T](r)}, nil
}

// Suspend waits until Resume or Throw, ctx's end, or the reactor's Close.
func (s *Suspension[T]) Suspend(ctx context.Context) (T, error) {
	s.mu.Lock()
	f := s.f
	s.mu.Unlock()
	v, err := f.Await(ctx)
	if f.Done() {
		s.mu.Lock()
		if s.f == f {
			s.f = event.NewFuture[T](s.r)
		}
		s.mu.Unlock()
	}
	return v, err
}

// Resume wakes the suspended goroutine with v. It returns
// event.ErrCompleted when a Resume or Throw is already waiting to be taken.
func (s *Suspension[T]) Resume(v T) error { return s.current().Resolve(v) }

// Throw wakes the suspended goroutine with err.
func (s *Suspension[T]) Throw(err error) error { return s.current().Reject(err) }

func (s *Suspension[T]) current() *event.Future[T] {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.f
}
