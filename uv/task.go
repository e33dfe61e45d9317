package uv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/eventkind"
	"github.com/uvevent/uvevent/reactor"
)

// ErrTaskStarted is returned by Task.Cancel when the work has started (or
// finished): it can no longer be taken back. It matches syscall.EBUSY, what
// libuv's uv_cancel returns then.
var ErrTaskStarted = fmt.Errorf("uv: task already started: %w", syscall.EBUSY)

// A TaskPool runs blocking work off the loop on at most a fixed number of
// goroutines, in the order it was queued; work waits in the queue while
// all of them are busy: libuv's thread pool model, with goroutines for
// threads (see the package documentation for why).
// Workers are started when work comes and end when the queue is empty, so
// an idle pool holds no goroutine. A TaskPool is safe for concurrent use;
// the zero value is not usable (use NewTaskPool).
type TaskPool struct {
	workers int

	mu      sync.Mutex
	queue   []queued
	running int // worker goroutines alive
}

// NewTaskPool returns a pool running at most workers tasks at a time. A
// count below 1, or above maxTaskPool (1,024: libuv's own limit on its
// pool's threads), is an error matching syscall.EINVAL.
func NewTaskPool(workers int) (*TaskPool, error) {
	if workers < 1 || workers > maxTaskPool {
		return nil, fmt.Errorf("uv: NewTaskPool(%d): %w", workers, syscall.EINVAL)
	}
	return &TaskPool{workers: workers}, nil
}

// maxTaskPool is the largest pool NewTaskPool makes: libuv's limit
// (MAX_THREADPOOL_SIZE) on UV_THREADPOOL_SIZE.
const maxTaskPool = 1024

// DefaultTaskPool is the pool QueueTask uses. Its size is libuv's: the
// UV_THREADPOOL_SIZE environment variable if it is a number from 1 to 1024,
// else 4.
var DefaultTaskPool = func() *TaskPool {
	n, err := strconv.Atoi(os.Getenv("UV_THREADPOOL_SIZE"))
	if err != nil || n < 1 || n > maxTaskPool {
		n = 4
	}
	p, _ := NewTaskPool(n)
	return p
}()

// Task states.
const (
	taskQueued int32 = iota
	taskRunning
	taskCanceled
	taskDone
)

var taskStateNames = [...]string{"queued", "running", "canceled", "done"}

// A Task is blocking work run by a TaskPool, and the event of its end: it
// completes on the loop goroutine with the function's result and error
// (a panic becomes an *event.PanicError), stored and replayed to later
// subscribers. It is started when queued and counts as active until it
// completes, so Run waits for it.
//
// Cancel takes back a task that has not started: it completes with
// context.Canceled and its function never runs. Close (or the last
// Dispose, or the reactor's Close) of a queued task takes it back too, and
// its subscribers hear event.ErrClosed; of a running one, it cancels the
// context the function was given and the result, when it comes, is only
// stored.
type Task[T any] struct {
	event.Base
	r      *reactor.Reactor
	fn     func(ctx context.Context) (T, error)
	ctx    context.Context
	cancel context.CancelFunc
	state  atomic.Int32
	out    outcome
	closer reactorCloser
}

type taskOps[T any] Task[T]

// queued is a task in a pool's queue, whatever its T.
type queued interface{ run() }

// QueueTask queues fn on DefaultTaskPool; see QueueTaskIn.
func QueueTask[T any](r *reactor.Reactor, fn func(ctx context.Context) (T, error)) (*Task[T], error) {
	return QueueTaskIn(DefaultTaskPool, r, fn)
}

// QueueTaskIn queues fn on p to run off the loop and returns its started
// Task, which completes with fn's T. A nil function, or a nil or zero
// TaskPool (one not made by NewTaskPool), is an error matching
// syscall.EINVAL; a closed reactor, ErrReactorClosed.
func QueueTaskIn[T any](p *TaskPool, r *reactor.Reactor, fn func(ctx context.Context) (T, error)) (*Task[T], error) {
	if err := checkReactor("Queue", r); err != nil {
		return nil, err
	}
	if p == nil || p.workers < 1 {
		return nil, fmt.Errorf("uv: TaskPool.Queue: a pool without workers (use NewTaskPool): %w", syscall.EINVAL)
	}
	if fn == nil {
		return nil, fmt.Errorf("uv: TaskPool.Queue: nil function: %w", syscall.EINVAL)
	}
	t := &Task[T]{r: r, fn: fn}
	t.ctx, t.cancel = context.WithCancel(context.Background())
	eventkind.Init(&t.Base, (*taskOps[T])(t), true, event.GoOwned)
	if err := t.Start(); err != nil {
		t.cancel()
		return nil, fmt.Errorf("uv: TaskPool.Queue: %w", err)
	}
	p.mu.Lock()
	p.queue = append(p.queue, t)
	start := p.running < p.workers
	if start {
		p.running++
	}
	p.mu.Unlock()
	if start {
		go p.work()
	}
	return t, nil
}

// work runs queued tasks until the queue is empty, then ends.
func (p *TaskPool) work() {
	for {
		p.mu.Lock()
		if len(p.queue) == 0 {
			p.running--
			p.mu.Unlock()
			return
		}
		t := p.queue[0]
		p.queue[0] = nil
		p.queue = p.queue[1:]
		p.mu.Unlock()
		t.run()
	}
}

// Queued returns how many tasks wait for a worker (canceled ones that no
// worker has passed over yet included).
func (p *TaskPool) Queued() int {
	if p == nil {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.queue)
}

// Cancel takes the task back if it has not started: it completes with an
// error matching context.Canceled and its function never runs. Once it has
// started (or finished) Cancel returns ErrTaskStarted and changes nothing.
func (t *Task[T]) Cancel() error {
	if t == nil || t.r == nil {
		return errZero("Task")
	}
	if !t.state.CompareAndSwap(taskQueued, taskCanceled) {
		return ErrTaskStarted
	}
	t.cancel()
	t.out.deliver(t.r, &t.Base, nil, fmt.Errorf("uv: task canceled before it started: %w", context.Canceled), nil)
	return nil
}

// neverRan reports whether the task was taken back before it started
// (Cancel, or the reactor's Close): its function will never run.
func (t *Task[T]) neverRan() bool { return t.state.Load() == taskCanceled }

// run runs the task's function on a worker, unless it was taken back.
func (t *Task[T]) run() {
	if t.state.CompareAndSwap(taskQueued, taskRunning) {
		res, err := callSafely(t.ctx, t.fn)
		t.state.Store(taskDone)
		t.cancel()
		t.out.deliver(t.r, &t.Base, res, err, nil)
	}
}

// callSafely runs fn, turning a panic into an *event.PanicError.
func callSafely[T any](ctx context.Context, fn func(context.Context) (T, error)) (res T, err error) {
	defer func() {
		if p := recover(); p != nil {
			var zero T
			res, err = zero, &event.PanicError{Value: p, Stack: debug.Stack()}
		}
	}()
	return fn(ctx)
}

func (o *taskOps[T]) Owner() event.Owner         { return o.r.Owner() }
func (o *taskOps[T]) Event() event.Event         { return (*Task[T])(o) }
func (o *taskOps[T]) Arm() error                 { return onReactorClose(&o.closer, o.r, (*Task[T])(o)) }
func (o *taskOps[T]) Disarm()                    {}
func (o *taskOps[T]) Stored() (any, error, bool) { return o.out.stored() }

// Free runs when the event has closed (its own Close, its last Dispose,
// its completion or the reactor's Close): a queued task is taken back, a
// running one has its context canceled.
func (o *taskOps[T]) Free(bool) {
	o.closer.forget()
	if err := (*Task[T])(o).Cancel(); errors.Is(err, ErrTaskStarted) {
		o.cancel()
	}
}

func (o *taskOps[T]) Describe() string { return "Task(" + taskStateNames[o.state.Load()] + ")" }
