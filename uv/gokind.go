package uv

import (
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/kind"
	"github.com/uvevent/uvevent/reactor"
)

// This file holds what the Go-owned kinds of this package share (Signal,
// Process, Exec, Task, Thread): none of them has a libuv handle. Their
// work happens in goroutines (os/signal's, a child's watcher, a worker) and
// reaches the loop through Reactor.Post.

// checkReactor refuses a nil reactor with an error naming the caller, and
// a reactor whose Close has begun with ErrReactorClosed.
func checkReactor(op string, r *reactor.Reactor) error {
	if r == nil {
		return fmt.Errorf("uv: %s: nil reactor: %w", op, syscall.EINVAL)
	}
	return armable(r)
}

// armable refuses with ErrReactorClosed once r's Close has begun: the Arm
// of every Go-owned kind here calls it, so that nothing a close
// notification does can start an event again.
func armable(r *reactor.Reactor) error {
	if kind.HostOf(r).Closing() {
		return reactor.ErrReactorClosed
	}
	return nil
}

// onReactorClose runs fn once when r's Close closes its events (on the
// goroutine calling Close, with the loop owned, before libuv's handles are
// closed), unless remove is called first. The reactor does not otherwise
// know the started Go-owned events of this package. If r is closed
// already, fn runs now. remove is safe from any goroutine.
func onReactorClose(r *reactor.Reactor, fn func()) (remove func()) {
	var once sync.Once
	run := func() { once.Do(fn) }
	var unregister func()
	if err := r.Exec(func() { unregister = kind.HostOf(r).AddCloser(run) }); err != nil {
		run()
		return func() {}
	}
	return func() { r.Exec(unregister) } // a closed reactor has forgotten it already
}

// outcome is the stored result of a one-shot Go-owned kind (Process, Exec,
// Task, Thread): written once, then replayed to late subscribers.
type outcome struct {
	done   atomic.Bool
	result any
	err    error
}

// stored implements event.Replayer for the kinds that embed an outcome.
func (o *outcome) stored() (any, error, bool) {
	if !o.done.Load() {
		return nil, nil, false
	}
	return o.result, o.err, true
}

// deliver stores (result, err) and completes b with it on r's loop: the
// event closes and its subscribers get the outcome as their last
// notification. From any goroutine. If r is closed, the outcome is only
// stored (Replay still gives it); after runs on the loop, or here when r is
// closed, once the outcome is stored.
func (o *outcome) deliver(r *reactor.Reactor, b *event.Base, result any, err error, after func()) {
	set := func() {
		if o.done.Load() {
			return
		}
		o.result, o.err = result, err
		o.done.Store(true)
		if after != nil {
			after()
		}
	}
	if perr := r.Post(func() {
		set()
		if !b.Flags().Has(event.Closed) {
			event.Complete(b, result, err)
		}
	}); perr != nil {
		set()
	}
}
