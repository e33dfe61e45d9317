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

// GroupOptions configure a Group. The zero value is fine.
type GroupOptions struct {
	// CancelOnError cancels the group's context at the first task error,
	// as golang.org/x/sync/errgroup does; Wait then returns that error.
	CancelOnError bool
}

// A Group is a task group: coroutines added to it share a context, and the
// group waits for all of them, for the first to succeed, or for n of them,
// with results and errors in the order the tasks were added. Every task is
// a reactor.Coroutine, an event like any other, so a task can also be
// awaited on its own or beside other events. Every method is safe from any
// goroutine.
type Group[T any] struct {
	r      *reactor.Reactor
	opts   GroupOptions
	ctx    context.Context
	cancel context.CancelCauseFunc

	mu    sync.Mutex
	tasks []*reactor.Coroutine[T]
	first error // the error that cancelled the group (CancelOnError)
}

// NewGroup returns a group of coroutines of r whose context derives from
// ctx: cancelling ctx cancels every task. Once r's Close has begun it
// refuses with reactor.ErrReactorClosed.
func NewGroup[T any](ctx context.Context, r *reactor.Reactor, opts GroupOptions) (*Group[T], error) {
	if r == nil || ctx == nil {
		return nil, fmt.Errorf("async: NewGroup needs a reactor and a context: %w", syscall.EINVAL)
	}
	if err := closing(r); err != nil {
		return nil, fmt.Errorf("async: NewGroup: %w", err)
	}
	g := &Group[T]{r: r, opts: opts}
	g.ctx, g.cancel = context.WithCancelCause(ctx)
	return g, nil
}

// Spawn adds fn as a cooperative coroutine (see reactor.Spawn).
func (g *Group[T]) Spawn(fn func(ctx context.Context) (T, error)) (*reactor.Coroutine[T], error) {
	return g.add(fn, reactor.Spawn[T])
}

// Go adds fn as a goroutine running in parallel with the loop (see
// reactor.Go).
func (g *Group[T]) Go(fn func(ctx context.Context) (T, error)) (*reactor.Coroutine[T], error) {
	return g.add(fn, reactor.Go[T])
}

type spawnFunc[T any] func(context.Context, *reactor.Reactor, func(context.Context) (T, error)) (*reactor.Coroutine[T], error)

func (g *Group[T]) add(fn func(context.Context) (T, error), spawn spawnFunc[T]) (*reactor.Coroutine[T], error) {
	if !g.usable() {
		return nil, event.ErrNilEvent
	}
	if fn == nil {
		return nil, fmt.Errorf("async: nil task: %w", syscall.EINVAL)
	}
	c, err := spawn(g.ctx, g.r, func(ctx context.Context) (T, error) {
		v, err := fn(ctx)
		if err != nil && g.opts.CancelOnError {
			g.fail(err)
		}
		return v, err
	})
	if err != nil {
		return nil, err
	}
	g.mu.Lock()
	g.tasks = append(g.tasks, c)
	g.mu.Unlock()
	return c, nil
}

func (g *Group[T]) fail(err error) {
	g.mu.Lock()
	if g.first == nil {
		g.first = err
	}
	g.mu.Unlock()
	g.cancel(err)
}

// Context returns the context the tasks get (nil for a nil or zero Group).
func (g *Group[T]) Context() context.Context {
	if !g.usable() {
		return nil
	}
	return g.ctx
}

// usable reports whether g is a group NewGroup made: a nil or zero one
// refuses with event.ErrNilEvent.
func (g *Group[T]) usable() bool { return g != nil && g.r != nil && g.ctx != nil }

// Cancel cancels the group's context: every task's context ends.
func (g *Group[T]) Cancel() {
	if g.usable() {
		g.cancel(context.Canceled)
	}
}

// Tasks returns the tasks added so far, in order of addition.
func (g *Group[T]) Tasks() []*reactor.Coroutine[T] {
	if !g.usable() {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]*reactor.Coroutine[T](nil), g.tasks...)
}

func (g *Group[T]) typed() []event.Typed[T] {
	tasks := g.Tasks()
	evs := make([]event.Typed[T], len(tasks))
	for i, t := range tasks {
		evs[i] = t
	}
	return evs
}

// Wait waits for every task added so far and returns their values in order
// of addition. The error is, with CancelOnError, the first task error;
// otherwise the tasks' errors joined in order of addition (nil when all
// succeeded). A ctx that ends first gives its error.
func (g *Group[T]) Wait(ctx context.Context) ([]T, error) {
	rs, err := g.wait(ctx, event.All().IgnoreErrors(), true)
	if rs == nil || err != nil {
		return nil, err
	}
	vs := make([]T, len(rs))
	var errs []error
	for i, r := range rs {
		vs[i] = r.Value
		if r.Err != nil {
			errs = append(errs, r.Err)
		}
	}
	g.mu.Lock()
	first := g.first
	g.mu.Unlock()
	if first != nil {
		return vs, first
	}
	return vs, errors.Join(errs...)
}

// WaitAny waits for the first task to succeed and returns its position and
// value; when every task failed, the position is -1 and the error joins
// theirs.
func (g *Group[T]) WaitAny(ctx context.Context) (int, T, error) {
	if !g.usable() {
		var zero T
		return -1, zero, event.ErrNilEvent
	}
	return event.AwaitFirst(ctx, g.typed()...)
}

// WaitN waits until n tasks have succeeded, or until that can no longer
// happen (then the error joins the failures). The results are by position;
// Done tells which tasks had finished. An n below 1 or above the number of
// tasks (a group with none included) is event.ErrBadMode, which matches
// syscall.EINVAL: never an empty success.
func (g *Group[T]) WaitN(ctx context.Context, n int) ([]Result[T], error) {
	return g.wait(ctx, event.AtLeast(n).IgnoreErrors(), false)
}

// wait awaits the group's tasks in mode m; with none, it returns at once,
// with nothing when none is a success for m (emptyOK), else ErrBadMode.
func (g *Group[T]) wait(ctx context.Context, m event.Mode, emptyOK bool) ([]Result[T], error) {
	if !g.usable() {
		return nil, event.ErrNilEvent
	}
	evs := g.typed()
	if len(evs) == 0 {
		if emptyOK {
			return nil, nil
		}
		return nil, fmt.Errorf("async: a wait for tasks of a group that has none: %w", event.ErrBadMode)
	}
	outs, err := event.Await(ctx, m, events(evs)...)
	return results[T](outs), err
}

// Result is one task's part in a wait, at its position.
type Result[T any] struct {
	Done  bool  // the task had finished
	Value T     // its value, when it succeeded
	Err   error // its error, when it failed
}

func results[T any](outs []event.Outcome) []Result[T] {
	if outs == nil {
		return nil
	}
	rs := make([]Result[T], len(outs))
	for i, o := range outs {
		v, err := event.ValueOf[T](o)
		rs[i] = Result[T]{Done: o.Done, Value: v, Err: err}
	}
	return rs
}

func events[T any](evs []event.Typed[T]) []event.Event {
	out := make([]event.Event, len(evs))
	for i, ev := range evs {
		out[i] = ev
	}
	return out
}
