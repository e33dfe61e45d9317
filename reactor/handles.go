package reactor

import (
	"log/slog"

	"github.com/uvevent/uvevent/eventref"
	uvcgo "github.com/uvevent/uvevent/internal/cgo"
	"github.com/uvevent/uvevent/internal/kind"
)

// This file is the reactor's side of internal/kind: the handle table and
// the libuv loop, as kind implementations (package uv) see them. The methods
// live on host, a private view of Reactor, so they never show on the
// reactor's API.

type host Reactor

// Host gives the kinds the host view of the owner's reactor (kind.HostOf).
func (o *owner) Host() kind.Host { return (*host)(o) }

// Loop returns the libuv loop. Calls on it that change libuv's state mark
// it dirty themselves (uvcgo's rule), so the reactor turns libuv before it
// parks whoever made them.
func (h *host) Loop() *uvcgo.Loop { return h.loop }

// Closing reports whether Close has begun: constructors and Start refuse
// with ErrReactorClosed from then on, even inside the close notifications.
func (h *host) Closing() bool { return h.closing.Load() }

func (h *host) AddHandle(k kind.Handle) eventref.ID {
	h.byKind[k.Kind()]++
	return h.handles.Add(k)
}

func (h *host) DropHandle(id eventref.ID) {
	if k, ok := h.handles.Remove(id); ok {
		h.byKind[k.Kind()]--
	}
}

// Retired implements kind.Host: id is no longer in the table.
func (h *host) Retired(id eventref.ID) bool {
	_, ok := h.handles.Get(id)
	return !ok
}

func (h *host) EveryTurn(delta int) { h.everyTurn += delta }

func (h *host) CountHandle(k string, delta int) { h.byKind[k] += delta }

func (h *host) AddTurnHook(which uvcgo.Phase, fn func()) (remove func()) {
	return h.hooks.add(which, fn)
}

func (h *host) CloseHandle(c uvcgo.Handle) { h.loop.CloseHandle(c) }

func (h *host) AddCloser(fn func()) (remove func()) {
	c := &closeHook{fn: fn}
	if h.closers == nil {
		h.closers = map[*closeHook]struct{}{}
	}
	h.closers[c] = struct{}{}
	return func() { delete(h.closers, c) }
}

// closeHook is one AddCloser registration.
type closeHook struct{ fn func() }

// runClosers runs and forgets every registered closer; Close calls it.
func (r *Reactor) runClosers() {
	for len(r.closers) > 0 {
		for c := range r.closers {
			delete(r.closers, c)
			r.safely(c.fn)
		}
	}
}

func (h *host) Queue(fn func()) error {
	r := (*Reactor)(h)
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return ErrReactorClosed
	}
	r.turnQueue = append(r.turnQueue, fn)
	r.turnPending.Store(true)
	r.mu.Unlock()
	r.signal()
	return nil
}

// PostOwned implements kind.Host: Post's queueing, without Post's run in
// the caller when nobody owns the loop.
func (h *host) PostOwned(fn func()) (bool, error) {
	r := (*Reactor)(h)
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return false, ErrReactorClosed
	}
	if !r.owned && r.acquiring == 0 {
		r.mu.Unlock()
		return false, nil
	}
	r.enqueueLocked(fn)
	return true, nil
}

// Dropped: the user's reference to the event of id was collected without
// Close. Called from the runtime's cleanup goroutine, it only queues the id;
// the loop closes the event on its next turn (or at Close).
func (h *host) Dropped(id eventref.ID) {
	r := (*Reactor)(h)
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return // Close closed every event already
	}
	r.dropped = append(r.dropped, id)
	r.pending.Store(true)
	r.mu.Unlock()
	r.signal()
}

// dispatch routes a turn's completion records. They point into C memory
// that the next turn reuses; nothing reached from here can turn the loop
// again (Run refuses to start on the loop goroutine).
//
// The writes the records' callbacks try (a Send answering a read) are
// deferred meanwhile and tried together when the records are dispatched,
// in one crossing (uvcgo.Loop.DeferTry, FlushTries): a turn that read from
// many connections answers them all in one call into the shim.
func (r *Reactor) dispatch(done []uvcgo.Completion) {
	i := 0
	r.loop.DeferTries(true)
	defer func() {
		r.ahead = nil
		// runtime.Goexit in a callback is unwinding this goroutine: the
		// rest of the turn's records (close records, request completions)
		// must still be delivered before the next turn releases them.
		if i < len(done) {
			r.dispatch(done[i+1:])
		}
		r.loop.DeferTries(false)
		r.safely(r.loop.FlushTries)
	}()
	for ; i < len(done); i++ {
		r.ahead = done[i+1:]
		r.complete(&done[i])
	}
}

// ReadAhead implements kind.Host: whether a read of the stream, or a
// datagram of the UDP, of id is among the records of the turn still to
// dispatch. Looked up only when a read lane would open
// (uv/io_readlane.go, uv/udp_lane.go).
func (h *host) ReadAhead(id eventref.ID) bool {
	for i := range h.ahead {
		if c := &h.ahead[i]; c.ID == uint64(id) && (c.Kind == uvcgo.CompletionRead || c.Kind == uvcgo.CompletionUDPRecv) {
			return true
		}
	}
	return false
}

// Reported implements kind.Host: whether a completion of the request of id
// is among the records of the turn still to dispatch. Looked up only when
// a request in flight closes, so dispatch pays nothing for it.
func (h *host) Reported(id eventref.ID) bool {
	for i := range h.ahead {
		if c := &h.ahead[i]; c.ID == uint64(id) && c.Request() {
			return true
		}
	}
	return false
}

// complete routes one completion record.
func (r *Reactor) complete(c *uvcgo.Completion) {
	id := eventref.ID(c.ID)
	if c.Kind == uvcgo.CompletionClosed {
		if h, ok := r.handles.Remove(id); ok {
			r.byKind[h.Kind()]--
		}
		return
	}
	h, ok := r.handles.Get(id)
	if !ok {
		r.opts.Logger.Debug("uvevent: completion for a retired id", slog.Uint64("id", c.ID))
		return
	}
	r.wd.cur = h.HandleEvent()
	r.safely(func() { h.Completed(c) })
	r.notified()
}

// closeDropped closes the event whose reference was collected: nothing can
// reach the event any more (references taken with Retain included), so its
// handle must go, whatever its count says.
func (r *Reactor) closeDropped(id eventref.ID) {
	if h, ok := r.handles.Get(id); ok {
		r.safely(func() { h.HandleEvent().Close() })
	}
}
