package reactor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/uvevent/uvevent/eventref"
	"github.com/uvevent/uvevent/internal/kind"
)

// lingerPrefix begins the name of a connection's lingering close
// (uv's lingerWhat): the rest is its event's Info.
const lingerPrefix = "the lingering close of "

// ErrCloseIncomplete: Shutdown's context ended after the reactor was
// closed but before everything its events had started was over — a child
// still being terminated, a libuv request still running on the thread
// pool, a connection's lingering close. The error Shutdown returns matches
// it and the context's error, and its text names the lingering closes it
// reset then ("reset: …"; each drop is reported too) and what it was still
// waiting for (a child running, or reaped with its output still open and
// who holds it). The reactor is closed all the
// same (nothing can use it any more); what was left finishes in the
// background, and a later Close waits for it.
var ErrCloseIncomplete = errors.New("reactor: closed, but work it started is not over")

// A lingering thing is work that outlives the event that started it and
// that the reactor's Close waits for (kind.Host.Linger): a child process
// being terminated, a connection's lingering close. what names it as it is
// when asked; reset, when set, cuts it short (kind.Host.LingerReset).
type lingering struct {
	what  func() string
	done  <-chan struct{}
	reset func()
}

// Linger implements kind.Host: Close waits, once every event is closed,
// until done is closed. Safe from any goroutine; after Close it does
// nothing.
func (h *host) Linger(what func() string, done <-chan struct{}) {
	(*Reactor)(h).linger(lingering{what: what, done: done})
}

// LingerReset implements kind.Host: Linger for work that Shutdown's
// context ending cuts short with reset (a connection's lingering close).
func (h *host) LingerReset(what func() string, done <-chan struct{}, reset func()) {
	(*Reactor)(h).linger(lingering{what: what, done: done, reset: reset})
}

// linger records l for Close to wait for.
func (r *Reactor) linger(l lingering) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.lingerDone {
		return // Close has stopped looking
	}
	// Forget what has ended, so that a reactor that lives long does not
	// keep every child it ever terminated.
	kept := r.lingers[:0]
	for _, l := range r.lingers {
		if !isClosed(l.done) {
			kept = append(kept, l)
		}
	}
	clear(r.lingers[len(kept):])
	r.lingers = append(kept, l)
}

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// anyLingering reports whether lingering work is not over yet.
func (r *Reactor) anyLingering() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, l := range r.lingers {
		if !isClosed(l.done) {
			return true
		}
	}
	return false
}

// stillLingering returns the names of the lingering work not over yet,
// asked for outside mu (a name may look into /proc).
func (r *Reactor) stillLingering() []string {
	r.mu.Lock()
	var left []func() string
	for _, l := range r.lingers {
		if !isClosed(l.done) {
			left = append(left, l.what)
		}
	}
	r.mu.Unlock()
	names := make([]string, 0, len(left))
	for _, what := range left {
		names = append(names, what())
	}
	return names
}

// waitLingering waits until every lingering work is over, then stops
// taking more (a Linger after that does nothing).
func (r *Reactor) waitLingering() {
	for {
		r.mu.Lock()
		var next <-chan struct{}
		for _, l := range r.lingers {
			if !isClosed(l.done) {
				next = l.done
				break
			}
		}
		if next == nil {
			r.lingers = nil
			r.lingerDone = true
			r.mu.Unlock()
			return
		}
		r.mu.Unlock()
		<-next
	}
}

// settle runs the end of a Close once every event is closed: it turns
// libuv until its handles' close callbacks have run and its requests are
// over (blocked in libuv), frees the loop, then waits for the lingering
// work. It is what the Shutdown goroutine does when its context cannot
// end; otherwise a goroutine of its own does it (see handOff).
func (r *Reactor) settle() error {
	r.waitResettable()
	r.waitLibuv()
	err := r.finishClose()
	r.waitLingering()
	return err
}

// handOff gives the loop to a goroutine of its own, which settles the
// close while Shutdown waits for it or for ctx. With ownership; after it
// returns, the calling goroutine owns the loop no more.
func (r *Reactor) handOff() {
	gids := make(chan uintptr)
	handed := make(chan struct{})
	go func() {
		gids <- uintptr(currentGID())
		<-handed
		var err error
		settled := false
		defer func() {
			if !settled {
				// runtime.Goexit in a close notification is ending this
				// goroutine: finish all the same.
				r.endResets()
				err = r.finishClose()
				r.waitLingering()
			}
			r.closeErr = err
			close(r.finished)
		}()
		err = r.settle()
		settled = true
	}()
	me := <-gids
	r.mu.Lock()
	loopOwners.CompareAndDelete(r.holder.Load(), r)
	r.holder.Store(me)
	loopOwners.LoadOrStore(me, r)
	r.mu.Unlock()
	close(handed)
}

// waitClosed waits for the end of a Close begun earlier (finished is
// closed), bounded by ctx; pending names what libuv still had in flight
// when the loop was handed off.
func (r *Reactor) waitClosed(ctx context.Context, pending []string) error {
	select {
	case <-r.finished:
		return r.closeErr
	case <-ctx.Done():
	}
	select {
	case <-r.finished: // both ready: the close is over
		return r.closeErr
	default:
	}
	reset := r.cutLingering()
	select {
	case <-r.finished:
		if len(reset) == 0 {
			return r.closeErr
		}
		pending = nil
	default:
	}
	var names []string
	for _, what := range reset {
		names = append(names, what())
	}
	// A handle that was still closing when the loop was handed off is
	// over once reset: name it once, as reset.
	pending = slices.DeleteFunc(slices.Clone(pending), func(p string) bool {
		return slices.Contains(names, lingerPrefix+p)
	})
	left := r.stillLingering()
	if len(left) < 8 {
		for i, p := range pending {
			if len(left) == 8 {
				left = append(left, fmt.Sprintf("and %d more", len(pending)-i))
				break
			}
			left = append(left, p)
		}
	}
	var text []string
	if len(names) > 0 {
		text = append(text, "reset: "+strings.Join(names, ", "))
	}
	if len(left) > 0 || len(names) == 0 && !isClosed(r.finished) {
		if len(left) == 0 {
			left = []string{"the loop's last close callbacks"}
		}
		text = append(text, "waiting for: "+strings.Join(left, ", "))
	}
	return fmt.Errorf("reactor: Shutdown: %w (%w): %s", ErrCloseIncomplete, ctx.Err(), strings.Join(text, "; "))
}

// cutLingering is what a Shutdown whose context ended does to the lingering
// closes not over yet: it asks the goroutine that settles the close to
// reset them at once (waitResettable), waits until it has, and returns
// their names. The first call cuts; a later one returns nothing.
func (r *Reactor) cutLingering() []func() string {
	r.mu.Lock()
	if r.cut == nil || isClosed(r.cut) {
		r.mu.Unlock()
		return nil
	}
	close(r.cut)
	if r.loop == nil {
		// The pure-Go driver's lingering closes write from goroutines of
		// their own, their resets safe from any goroutine: reset them
		// here, and wait until each has reported its drop and closed.
		var left []lingering
		for i, l := range r.lingers {
			if l.reset != nil && !isClosed(l.done) {
				left = append(left, l)
				r.lingers[i].reset = nil // once
			}
		}
		r.mu.Unlock()
		names := make([]func() string, 0, len(left))
		for _, l := range left {
			l.reset()
			<-l.done
			names = append(names, l.what)
		}
		return names
	}
	if r.wakeable {
		r.loop.Wake() // out of the blocking wait in waitResettable
	}
	cutDone := r.cutDone
	r.mu.Unlock()
	<-cutDone
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.resetNames
}

// resettable returns a lingering close not over yet (kind.Host.LingerReset),
// or nil. Under mu.
func (r *Reactor) resettable() *lingering {
	for i, l := range r.lingers {
		if l.reset != nil && !isClosed(l.done) {
			return &r.lingers[i]
		}
	}
	return nil
}

// waitResettable waits, with ownership, before the loop stops taking
// wake-ups (waitLibuv), until every lingering close of the libuv driver is
// over, turning the loop meanwhile (its writes and its timer run there).
// When a Shutdown's context ends first (cut closed), it resets those left
// at once, each reporting its drop, and records their names for
// Shutdown's error. It then closes cutDone. The pure-Go driver's lingering
// closes need no loop: waitLingering waits for them, once the loop is
// given up (a drop's report may ask the loop for the event's Info), and
// cutLingering resets them.
func (r *Reactor) waitResettable() {
	defer r.endResets()
	if r.loop == nil {
		return
	}
	for {
		r.mu.Lock()
		l := r.resettable()
		cut := r.cut != nil && isClosed(r.cut)
		// Only then is the loop's keeper open (quiesce left it so).
		r.wakeable = r.loop != nil && l != nil && !cut
		var reset func()
		if l != nil {
			reset = l.reset
			if cut {
				l.reset = nil // once
				r.resetNames = append(r.resetNames, l.what)
			}
		}
		r.mu.Unlock()
		switch {
		case l == nil:
			return
		case cut:
			r.safely(reset) // the stream closes at once: next is closed
			r.drain()
		default:
			done, _ := r.loop.Wait(-1)
			r.dispatch(done)
			r.drain()
		}
	}
}

// endResets tells a Shutdown waiting in cutLingering that the resets are
// over (or were never needed). Once.
func (r *Reactor) endResets() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.wakeable = false
	if r.cutDone != nil && !isClosed(r.cutDone) {
		close(r.cutDone)
	}
}

// quiesce turns libuv without blocking as long as that makes progress
// (closing handles complete in one such turn), and reports whether
// anything is left that the close would have to wait for. With ownership.
func (r *Reactor) quiesce() (pending []string) {
	if r.loop != nil {
		r.mu.Lock()
		lingering := r.resettable() != nil
		r.mu.Unlock()
		if !lingering {
			// A lingering close keeps the loop taking wake-ups, so that
			// a Shutdown whose context ends can reset it.
			r.loop.Shutdown()
		}
		for r.loop.Handles() > 0 || r.loop.Requests() > 0 {
			h, q := r.loop.Handles(), r.loop.Requests()
			done, _ := r.loop.Turn()
			r.dispatch(done)
			r.drain()
			if len(done) == 0 && h == r.loop.Handles() && q == r.loop.Requests() {
				break
			}
		}
		if n := r.loop.Requests(); n > 0 || r.loop.Handles() > 0 {
			r.handles.Each(func(_ eventref.ID, h kind.Handle) {
				pending = append(pending, h.HandleEvent().Info())
			})
			if len(pending) == 0 {
				pending = append(pending, fmt.Sprintf("%d libuv requests", n))
			}
		}
	}
	return pending
}

// waitLibuv turns libuv, blocked in it rather than spinning, until every
// handle's close callback has run and every request in flight is over.
func (r *Reactor) waitLibuv() {
	if r.loop == nil {
		return
	}
	r.loop.Shutdown()
	idle := 0
	for r.loop.Handles() > 0 || r.loop.Requests() > 0 {
		h, q := r.loop.Handles(), r.loop.Requests()
		done, _ := r.loop.TurnBlocking()
		r.dispatch(done)
		r.drain()
		// A blocking turn returns at once only when libuv has nothing
		// left to wait for: a handle still counted then is one libuv no
		// longer knows of (a bug). Report it rather than spin.
		if len(done) == 0 && h == r.loop.Handles() && q == r.loop.Requests() {
			if idle++; idle == 1000 {
				r.report(nil, "handles left open at Close", fmt.Errorf("%d C handles, %d requests", h, q))
				return
			}
		} else {
			idle = 0
		}
	}
}
