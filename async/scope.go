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

// Errors of scopes.
var (
	// ErrScopeClosed: a coroutine or a child was added to a closed scope.
	ErrScopeClosed = errors.New("async: scope closed")
	// ErrOutlived: coroutines of a scope were still running when Close
	// gave up waiting for them; each is reported to the reactor.
	ErrOutlived = errors.New("async: coroutines outlived their scope")
)

// A Scope is structured cancellation: it owns coroutines and child scopes.
// Cancelling a scope cancels all of them (their contexts end); Close
// cancels, waits for them, and reports any that outlive the scope. A scope
// is made from a context and gives one: cancelling the parent context
// cancels the scope, and Context is what its coroutines get. Every method
// is safe from any goroutine.
type Scope struct {
	r      *reactor.Reactor
	ctx    context.Context
	cancel context.CancelCauseFunc

	mu       sync.Mutex
	children []*Scope
	tasks    []event.Event // the coroutines, as events
	closed   bool
}

// NewScope returns a scope of r whose context derives from ctx.
func NewScope(r *reactor.Reactor, ctx context.Context) (*Scope, error) {
	if r == nil || ctx == nil {
		return nil, fmt.Errorf("async: NewScope needs a reactor and a context: %w", syscall.EINVAL)
	}
	s := &Scope{r: r}
	s.ctx, s.cancel = context.WithCancelCause(ctx)
	return s, nil
}

// Child returns a new scope inside s: cancelling or closing s cancels or
// closes it too.
func (s *Scope) Child() (*Scope, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrScopeClosed
	}
	c := &Scope{r: s.r}
	c.ctx, c.cancel = context.WithCancelCause(s.ctx)
	s.children = append(s.children, c)
	return c, nil
}

// Spawn runs fn as a cooperative coroutine of s (see reactor.Spawn).
func Spawn[T any](s *Scope, fn func(ctx context.Context) (T, error)) (*reactor.Coroutine[T], error) {
	return spawnIn(s, fn, reactor.Spawn[T])
}

// Go runs fn as a goroutine of s, in parallel with the loop (see
// reactor.Go).
func Go[T any](s *Scope, fn func(ctx context.Context) (T, error)) (*reactor.Coroutine[T], error) {
	return spawnIn(s, fn, reactor.Go[T])
}

func spawnIn[T any](s *Scope, fn func(context.Context) (T, error), spawn spawnFunc[T]) (*reactor.Coroutine[T], error) {
	if s == nil {
		return nil, fmt.Errorf("async: coroutine in a nil scope: %w", syscall.EINVAL)
	}
	// s.mu is not held while spawning: that may wait for the loop, whose
	// callbacks may use the scope.
	if s.isClosed() {
		return nil, ErrScopeClosed
	}
	c, err := spawn(s.r, s.ctx, fn)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.tasks = append(s.tasks, c) // even if Close came meanwhile: it is waited for
	s.mu.Unlock()
	return c, nil
}

func (s *Scope) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// Context returns the scope's context: it ends when the scope is cancelled
// or closed, or when its parent context ends.
func (s *Scope) Context() context.Context { return s.ctx }

// Cancel cancels the scope: the contexts of its coroutines and of its
// children's end.
func (s *Scope) Cancel() { s.cancel(context.Canceled) }

// all returns the coroutines of s and of its children, depth first.
func (s *Scope) all() []event.Event {
	s.mu.Lock()
	evs := append([]event.Event(nil), s.tasks...)
	children := append([]*Scope(nil), s.children...)
	s.mu.Unlock()
	for _, c := range children {
		evs = append(evs, c.all()...)
	}
	return evs
}

// Wait waits for every coroutine of s and of its children (those added so
// far). It returns their errors joined; errors that only say the scope was
// cancelled are left out.
func (s *Scope) Wait(ctx context.Context) error {
	evs := s.all()
	if len(evs) == 0 {
		return nil
	}
	outs, err := event.Await(ctx, event.All().IgnoreErrors(), evs...)
	if err != nil {
		return err
	}
	var errs []error
	for _, o := range outs {
		if o.Err != nil && !(errors.Is(o.Err, context.Canceled) && s.ctx.Err() != nil) {
			errs = append(errs, o.Err)
		}
	}
	return errors.Join(errs...)
}

// Close cancels the scope, then waits for its coroutines and children until
// ctx ends. If some still run then, each is reported to the reactor
// ("coroutine outlived its scope", with its Info) and Close returns
// ErrOutlived. A closed scope refuses new coroutines and children. Closing
// twice waits again.
func (s *Scope) Close(ctx context.Context) error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.Cancel()
	err := s.Wait(ctx)
	if ctx.Err() == nil {
		return err
	}
	var alive []event.Event
	for _, ev := range s.all() {
		if !ev.Flags().Has(event.Closed) {
			alive = append(alive, ev)
		}
	}
	if len(alive) == 0 {
		return err
	}
	s.r.Post(func() {
		for _, ev := range alive {
			s.r.Report(ev, "coroutine outlived its scope", ErrOutlived)
		}
	})
	return fmt.Errorf("%w: %d still running", ErrOutlived, len(alive))
}
