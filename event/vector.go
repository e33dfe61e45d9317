package event

// vector is an event's list of callbacks. Removal is O(1) after a linear
// find: the last element takes the removed one's place. A notification pass
// may run while callbacks add and remove subscribers; the pass keeps these
// rules, which the fuzz test checks against a model:
//
//   - a callback removed before its turn is not called;
//   - a callback added during the pass is called in the same pass;
//   - every other callback is called exactly once.
//
// The pass (Base.notify) keeps the called callbacks in s[:next] and the
// waiting ones in s[next:]. Removing a waiting one moves the last element into its place;
// removing a called one moves the most recently called into its place and the
// last element into the freed slot at the boundary, so neither region loses
// or gains a member it should not.
type vector struct {
	// one is the only subscriber while more is nil (nil: none). Most
	// events have one subscriber, so the vector is two words, not a
	// slice and an inline slot (a million armed timers are a million
	// vectors: docs/benchmarks.md, T1).
	one  [1]*Callback
	more *spill // from the second subscriber on, every subscriber
}

// spill holds the subscribers of an event that has had two or more; buf
// is the first backing array, allocated with it.
type spill struct {
	s   []*Callback
	buf [2]*Callback
}

// all returns the subscribers in order. The slice aliases the vector's
// storage: writes to its elements are writes to the vector.
func (v *vector) all() []*Callback {
	if v.more != nil {
		return v.more.s
	}
	if v.one[0] != nil {
		return v.one[:]
	}
	return nil
}

func (v *vector) len() int {
	if v.more != nil {
		return len(v.more.s)
	}
	if v.one[0] != nil {
		return 1
	}
	return 0
}

func (v *vector) add(cb *Callback) {
	switch {
	case v.more != nil:
		v.more.s = append(v.more.s, cb)
	case v.one[0] == nil:
		v.one[0] = cb
	default:
		m := &spill{}
		m.buf = [2]*Callback{v.one[0], cb}
		m.s = m.buf[:]
		v.more, v.one[0] = m, nil
	}
}

// index returns the position of cb, or -1.
func (v *vector) index(cb *Callback) int {
	for i, c := range v.all() {
		if c == cb {
			return i
		}
	}
	return -1
}

// remove takes out the element at i, keeping the pass rules. next is the
// running pass's index of the next callback to call (-1 outside a pass).
func (v *vector) remove(i int, next *int32) {
	s := v.all()
	last := len(s) - 1
	if n := int(*next); n >= 0 && i < n {
		// A called element goes: the most recently called one fills its
		// slot, and the last element fills the boundary slot.
		s[i] = s[n-1]
		s[n-1] = s[last]
		*next--
	} else {
		s[i] = s[last]
	}
	s[last] = nil // with one subscriber, s is v.one[:]: this empties it
	if v.more != nil {
		v.more.s = s[:last]
	}
}

// clear removes every callback, handing each to f (used when the event
// closes). f must not add to v.
func (v *vector) clear(f func(*Callback)) {
	if v.more == nil {
		if c := v.one[0]; c != nil {
			v.one[0] = nil
			f(c)
		}
		return
	}
	s := v.more.s
	v.more = nil
	for i, c := range s {
		s[i] = nil
		f(c)
	}
}
