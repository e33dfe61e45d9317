package reactor

import (
	"log/slog"

	uvcgo "github.com/uvevent/uvevent/cgo"
	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/eventref"
)

// This file is the reactor's interface for kind implementations (package
// uv): the handle table and the libuv loop. It is not meant for
// applications.

// Handle is the loop-side record of a C-owned event: what the reactor needs
// to route libuv's completion records to it. Kinds in package uv implement
// it; the reactor keeps it in its id table from AddHandle until libuv's close
// callback has freed the C memory.
type Handle interface {
	// Kind names the kind for Stats ("trigger", "poll", ...).
	Kind() string
	// HandleEvent returns the event, to close it when the reactor closes.
	HandleEvent() event.Event
	// Completed receives a completion record (never CompletionClosed).
	Completed(c uvcgo.Completion)
}

// Loop returns the libuv loop, for kinds that create handles. It must be
// used with ownership (inside Exec or a callback).
func (r *Reactor) Loop() *uvcgo.Loop {
	r.uvDirty = true
	return r.loop
}

// AddHandle records h and returns the id its C handle must report with.
// Call it with ownership, before creating the C handle; if creating the
// handle fails, call DropHandle.
func (r *Reactor) AddHandle(h Handle) eventref.ID {
	r.byKind[h.Kind()]++
	return r.handles.Add(h)
}

// DropHandle forgets a handle whose C side never came to exist.
func (r *Reactor) DropHandle(id eventref.ID) {
	if h, ok := r.handles.Remove(id); ok {
		r.byKind[h.Kind()]--
	}
}

// CloseHandle starts closing a C handle. Its id stays valid (late
// completions still find the kind, which ignores them once closed) until the
// close callback reports, and then it is retired.
func (r *Reactor) CloseHandle(h uvcgo.Handle) {
	r.uvDirty = true
	r.loop.CloseHandle(h)
}

// complete routes one completion record.
func (r *Reactor) complete(c uvcgo.Completion) {
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
	r.safely(func() { h.Completed(c) })
}

// Dropped implements eventref.Dropper: the user's reference to the event of
// id was collected without Close. Called from the runtime's cleanup
// goroutine, it only queues the id; the loop closes the event on its next
// turn (or at Close).
func (r *Reactor) Dropped(id eventref.ID) {
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

// closeDropped closes the event whose reference was collected: nothing can
// reach the event any more (references taken with Retain included), so its
// handle must go, whatever its count says.
func (r *Reactor) closeDropped(id eventref.ID) {
	if h, ok := r.handles.Get(id); ok {
		r.safely(func() { h.HandleEvent().Close() })
	}
}
