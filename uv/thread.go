package uv

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"syscall"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/eventkind"
	"github.com/uvevent/uvevent/reactor"
)

// A Thread is a function run on an OS thread of its own, and the event of
// its end: it completes on the loop goroutine with the function's result
// and error (a panic becomes an *event.PanicError), stored and replayed to
// later subscribers.
//
// The function runs on a goroutine locked to its OS thread
// (runtime.LockOSThread) for its whole run, so thread-local state (the
// thread's signal mask, its namespaces, C thread-locals through cgo) is
// its own; the goroutine never unlocks, so when the function returns the
// thread ends with it and nothing it changed leaks into other goroutines
// (the runtime parks the main thread for good instead of ending it).
// Use Thread for work that needs a thread; use Task for plain blocking
// work, which is bounded by its pool.
//
// The Thread is started when created and counts as active until the
// function returns. Close (or the last Dispose, or the reactor's Close)
// while it runs cancels the context the function was given and its
// subscribers hear event.ErrClosed; the result, when it comes, is only
// stored.
type Thread[T any] struct {
	event.Base
	r      *reactor.Reactor
	ctx    context.Context
	cancel context.CancelFunc
	tid    atomic.Int64 // the OS thread id once running
	out    outcome
	closer reactorCloser
}

type threadOps[T any] Thread[T]

// NewThread runs fn on a new locked OS thread and returns its started
// Thread event, which completes with fn's T. A nil function is an error
// matching syscall.EINVAL.
func NewThread[T any](r *reactor.Reactor, fn func(ctx context.Context) (T, error)) (*Thread[T], error) {
	if err := checkReactor("NewThread", r); err != nil {
		return nil, err
	}
	if fn == nil {
		return nil, fmt.Errorf("uv: NewThread: nil function: %w", syscall.EINVAL)
	}
	t := &Thread[T]{r: r}
	t.ctx, t.cancel = context.WithCancel(context.Background())
	eventkind.Init(&t.Base, (*threadOps[T])(t), true, event.GoOwned)
	if err := t.Start(); err != nil {
		t.cancel()
		return nil, fmt.Errorf("uv: NewThread: %w", err)
	}
	go t.run(fn)
	return t, nil
}

// run is the thread's goroutine. It never calls UnlockOSThread: the thread
// ends when the goroutine does.
func (t *Thread[T]) run(fn func(context.Context) (T, error)) {
	runtime.LockOSThread()
	t.tid.Store(int64(gettid()))
	res, err := callSafely(t.ctx, fn)
	t.cancel()
	t.out.deliver(t.r, &t.Base, res, err, nil)
}

// ThreadID returns the OS thread id the function runs on, or 0 before it
// has started (-1 on systems other than Linux, which give none).
func (t *Thread[T]) ThreadID() int {
	if t == nil {
		return 0
	}
	return int(t.tid.Load())
}

func (o *threadOps[T]) Owner() event.Owner         { return o.r.Owner() }
func (o *threadOps[T]) Event() event.Event         { return (*Thread[T])(o) }
func (o *threadOps[T]) Arm() error                 { return onReactorClose(&o.closer, o.r, (*Thread[T])(o)) }
func (o *threadOps[T]) Disarm()                    {}
func (o *threadOps[T]) Stored() (any, error, bool) { return o.out.stored() }

// Free runs when the event has closed (its own Close, its last Dispose,
// its completion or the reactor's Close): a running function has its
// context canceled.
func (o *threadOps[T]) Free(bool) {
	o.closer.forget()
	o.cancel()
}
func (o *threadOps[T]) Describe() string {
	state := "running"
	switch {
	case o.out.done.Load():
		state = "done"
	case o.tid.Load() == 0:
		return "Thread(starting)"
	}
	return fmt.Sprintf("Thread(tid=%d, %s)", o.tid.Load(), state)
}
