// Package eventref holds event references: the Go objects users hold for
// events whose memory is C-owned (libuv handles), so that Go's garbage
// collector and libuv's asynchronous uv_close never race.
//
// The C handle is allocated by the shim and freed only in its uv_close
// callback. The Go side never keeps its address where the collector could
// take it for a Go pointer; it reaches the handle's event through a Table, by
// an ID that carries the slot's generation. When the close callback has run,
// the slot is removed and its generation moves on, so an ID kept anywhere —
// in a late completion record, in a cleanup queued by the collector — can
// never reach the event that later reuses the slot.
//
// The user's object is tracked with runtime.AddCleanup (see Track): dropping
// it without Close queues a close of its event on the loop goroutine, and
// Close cancels the cleanup.
package eventref

import "runtime"

// ID names a slot of a Table: the slot index in the low 32 bits, the slot's
// generation when the ID was issued in the high 32 bits. The zero ID is never
// issued.
type ID uint64

func (id ID) slot() uint32 { return uint32(id) }
func (id ID) gen() uint32  { return uint32(id >> 32) }

func makeID(slot, gen uint32) ID { return ID(uint64(gen)<<32 | uint64(slot)) }

// Table maps IDs to values. It is not safe for concurrent use: the reactor's
// loop goroutine owns it.
type Table[T any] struct {
	slots []slot[T]
	free  []uint32
	live  int
}

type slot[T any] struct {
	gen  uint32 // generation of the current (or next) occupant; never 0
	used bool
	v    T
}

// Add stores v and returns its ID.
func (t *Table[T]) Add(v T) ID {
	var i uint32
	if n := len(t.free); n > 0 {
		i = t.free[n-1]
		t.free = t.free[:n-1]
	} else {
		i = uint32(len(t.slots))
		t.slots = append(t.slots, slot[T]{gen: 1})
	}
	s := &t.slots[i]
	s.used = true
	s.v = v
	t.live++
	return makeID(i, s.gen)
}

// Get returns the value stored under id, if id is current.
func (t *Table[T]) Get(id ID) (v T, ok bool) {
	i := id.slot()
	if int(i) >= len(t.slots) {
		return v, false
	}
	s := &t.slots[i]
	if !s.used || s.gen != id.gen() {
		return v, false
	}
	return s.v, true
}

// Remove deletes the value under id, if id is current, and retires id: the
// slot's generation moves on before the slot is reused.
func (t *Table[T]) Remove(id ID) (v T, ok bool) {
	v, ok = t.Get(id)
	if !ok {
		return v, false
	}
	i := id.slot()
	s := &t.slots[i]
	var zero T
	s.v = zero
	s.used = false
	if s.gen++; s.gen == 0 {
		s.gen = 1
	}
	t.free = append(t.free, i)
	t.live--
	return v, true
}

// Len returns the number of values stored.
func (t *Table[T]) Len() int { return t.live }

// Each calls f for every stored value, in slot order. f may Remove the
// value it is given.
func (t *Table[T]) Each(f func(ID, T)) {
	for i := range t.slots {
		s := &t.slots[i]
		if s.used {
			f(makeID(uint32(i), s.gen), s.v)
		}
	}
}

// Dropper receives the IDs of references dropped without Close. It is called
// from the runtime's cleanup goroutine, so it must only queue the close.
type Dropper interface {
	// Dropped is told the ID of one reference the collector took.
	Dropped(id ID)
}

type tracked struct {
	d  Dropper
	id ID
}

// dropped tells t's Dropper of its ID: the cleanup Track registers. A
// function of the package, not a literal in Track, which as a generic
// function's closure would be allocated at every Track.
func dropped(t tracked) { t.d.Dropped(t.id) }

// Track arranges for d.Dropped(id) to be called once obj is unreachable.
// The returned cleanup is stopped by the object's Close. obj must not be
// reachable from d or from the event, or it will never be collected.
func Track[T any](obj *T, d Dropper, id ID) runtime.Cleanup {
	return runtime.AddCleanup(obj, dropped, tracked{d, id})
}
