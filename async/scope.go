package async

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"syscall"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/eventkind"
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
//
// A scope holds only what is still running: a finished coroutine is
// forgotten, its error (if it is one Wait reports) kept until a Wait or
// Close returns it; a closed child whose coroutines have all finished is
// forgotten by its parent. A long-lived scope that runs one coroutine per
// request stays as small as the requests in flight.
type Scope struct {
	r      *reactor.Reactor
	ctx    context.Context
	cancel context.CancelCauseFunc
	parent *Scope

	mu       sync.Mutex
	children []*Scope
	tasks    map[event.Event]int // the coroutines still running, as events, to their number
	added    int                 // coroutines added so far
	errs     []error             // of finished coroutines, not yet returned by Wait
	closed   bool
}

// NewScope returns a scope of r whose context derives from ctx. Once r's
// Close has begun it refuses with reactor.ErrReactorClosed.
func NewScope(ctx context.Context, r *reactor.Reactor) (*Scope, error) {
	if r == nil || ctx == nil {
		return nil, fmt.Errorf("async: NewScope needs a reactor and a context: %w", syscall.EINVAL)
	}
	if err := closing(r); err != nil {
		return nil, fmt.Errorf("async: NewScope: %w", err)
	}
	return newScope(ctx, r, nil), nil
}

func newScope(ctx context.Context, r *reactor.Reactor, parent *Scope) *Scope {
	s := &Scope{r: r, parent: parent, tasks: map[event.Event]int{}}
	s.ctx, s.cancel = context.WithCancelCause(ctx)
	return s
}

// Child returns a new scope inside s: cancelling or closing s cancels or
// closes it too.
func (s *Scope) Child() (*Scope, error) {
	if !s.usable() {
		return nil, event.ErrNilEvent
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrScopeClosed
	}
	c := newScope(s.ctx, s.r, s)
	s.children = append(s.children, c)
	return c, nil
}

// Spawn runs fn as a cooperative coroutine of s (see reactor.Spawn): on s's
// reactor, with a context derived from s's (the package doc says why s
// stands for reactor.Spawn's context and reactor).
func Spawn[T any](s *Scope, fn func(ctx context.Context) (T, error)) (*reactor.Coroutine[T], error) {
	return spawnIn(s, fn, reactor.Spawn[T])
}

// Go runs fn as a goroutine of s, in parallel with the loop (see
// reactor.Go): on s's reactor, with a context derived from s's.
func Go[T any](s *Scope, fn func(ctx context.Context) (T, error)) (*reactor.Coroutine[T], error) {
	return spawnIn(s, fn, reactor.Go[T])
}

func spawnIn[T any](s *Scope, fn func(context.Context) (T, error), spawn spawnFunc[T]) (*reactor.Coroutine[T], error) {
	if !s.usable() {
		return nil, fmt.Errorf("async: coroutine in a nil or zero scope: %w", event.ErrNilEvent)
	}
	// s.mu is not held while spawning: that may wait for the loop, whose
	// callbacks may use the scope.
	if s.isClosed() {
		return nil, ErrScopeClosed
	}
	c, err := spawn(s.ctx, s.r, fn)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.added++
	s.tasks[c] = s.added // even if Close came meanwhile: it is waited for
	s.mu.Unlock()
	// The outcome (at once if c has finished already) makes s forget c.
	event.Subscribe(c, func(_ event.Event, _ any, err error) {
		if c.Done() {
			s.finished(c, err)
		}
	})
	return c, nil
}

// finished forgets the coroutine ev, which ended with err, keeping err for
// Wait unless it only says that s was cancelled. Of the subscriber and Wait,
// whichever comes first takes ev.
func (s *Scope) finished(ev event.Event, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.tasks[ev]; !ok {
		return
	}
	delete(s.tasks, ev)
	if err != nil && !(errors.Is(err, context.Canceled) && s.ctx.Err() != nil) {
		s.errs = append(s.errs, err)
	}
}

func (s *Scope) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// Context returns the scope's context: it ends when the scope is cancelled
// or closed, or when its parent context ends (nil for a nil or zero Scope).
func (s *Scope) Context() context.Context {
	if !s.usable() {
		return nil
	}
	return s.ctx
}

// usable reports whether s is a scope NewScope (or Child) made: a nil or
// zero one refuses with event.ErrNilEvent.
func (s *Scope) usable() bool { return s != nil && s.r != nil && s.ctx != nil }

// Cancel cancels the scope: the contexts of its coroutines and of its
// children's end.
func (s *Scope) Cancel() {
	if s.usable() {
		s.cancel(context.Canceled)
	}
}

// all returns the running coroutines of s, in the order they were added,
// and of its children, depth first, each with its scope.
func (s *Scope) all() ([]event.Event, []*Scope) {
	s.mu.Lock()
	evs := make([]event.Event, 0, len(s.tasks))
	for ev := range s.tasks {
		evs = append(evs, ev)
	}
	slices.SortFunc(evs, func(a, b event.Event) int { return s.tasks[a] - s.tasks[b] })
	in := make([]*Scope, len(evs))
	for i := range in {
		in[i] = s
	}
	children := append([]*Scope(nil), s.children...)
	s.mu.Unlock()
	for _, c := range children {
		cevs, cin := c.all()
		evs, in = append(evs, cevs...), append(in, cin...)
	}
	return evs, in
}

// takeErrs returns the kept errors of s and of its children, depth first,
// and forgets them.
func (s *Scope) takeErrs() []error {
	s.mu.Lock()
	errs := s.errs
	s.errs = nil
	children := append([]*Scope(nil), s.children...)
	s.mu.Unlock()
	for _, c := range children {
		errs = append(errs, c.takeErrs()...)
	}
	return errs
}

// Wait waits for every coroutine of s and of its children (those added so
// far). It returns their errors joined, with those of coroutines that
// finished earlier and that no Wait has returned yet: each error is
// returned once. Errors that only say the coroutine's scope was cancelled
// are left out. A nil ctx is refused (syscall.EINVAL).
func (s *Scope) Wait(ctx context.Context) error {
	if !s.usable() {
		return event.ErrNilEvent
	}
	if ctx == nil {
		return fmt.Errorf("async: Scope.Wait with a nil context: %w", syscall.EINVAL)
	}
	evs, in := s.all()
	if len(evs) > 0 {
		outs, err := event.Await(ctx, event.All().IgnoreErrors(), evs...)
		if err != nil {
			return err
		}
		for i, o := range outs {
			in[i].finished(evs[i], o.Err)
		}
	}
	return errors.Join(s.takeErrs()...)
}

// Close cancels the scope, then waits for its coroutines and children until
// ctx ends. If some still run then, each is reported to the reactor
// ("coroutine outlived its scope", with its Info) and Close returns an
// error matching both ErrOutlived and ctx.Err(). A closed scope refuses new
// coroutines and children. Closing twice waits again. A nil ctx is refused (syscall.EINVAL), and the scope
// is left as it was.
func (s *Scope) Close(ctx context.Context) error {
	if !s.usable() {
		return event.ErrNilEvent
	}
	if ctx == nil {
		return fmt.Errorf("async: Scope.Close with a nil context: %w", syscall.EINVAL)
	}
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.Cancel()
	err := s.Wait(ctx)
	if ctx.Err() == nil {
		s.detach()
		return err
	}
	evs, _ := s.all()
	var alive []event.Event
	for _, ev := range evs {
		if !ev.Flags().Has(event.Closed) {
			alive = append(alive, ev)
		}
	}
	if len(alive) == 0 {
		return err
	}
	report := func() {
		for _, ev := range alive {
			eventkind.Report(s.r.Owner(), ev, "coroutine outlived its scope", ErrOutlived)
		}
	}
	if s.r.Post(report) != nil {
		report() // the reactor has closed: its handler still hears
	}
	return fmt.Errorf("%w: %d still running: %w", ErrOutlived, len(alive), ctx.Err())
}

// detach makes the parent of a closed scope forget it once nothing of it
// runs any more.
func (s *Scope) detach() {
	s.mu.Lock()
	idle := len(s.tasks) == 0 && len(s.children) == 0 && len(s.errs) == 0
	s.mu.Unlock()
	if !idle || s.parent == nil {
		return
	}
	p := s.parent
	p.mu.Lock()
	p.children = slices.DeleteFunc(p.children, func(c *Scope) bool { return c == s })
	p.mu.Unlock()
}
