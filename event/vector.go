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
	s   []*Callback
	one [1]*Callback // inline storage: most events have one subscriber
}

func (v *vector) len() int { return len(v.s) }

func (v *vector) add(cb *Callback) {
	if v.s == nil {
		v.s = v.one[:0:1]
	}
	v.s = append(v.s, cb)
}

// index returns the position of cb, or -1.
func (v *vector) index(cb *Callback) int {
	for i, c := range v.s {
		if c == cb {
			return i
		}
	}
	return -1
}

// remove takes out the element at i, keeping the pass rules. next is the
// running pass's index of the next callback to call (-1 outside a pass).
func (v *vector) remove(i int, next *int32) {
	last := len(v.s) - 1
	if n := int(*next); n >= 0 && i < n {
		// A called element goes: the most recently called one fills its
		// slot, and the last element fills the boundary slot.
		v.s[i] = v.s[n-1]
		v.s[n-1] = v.s[last]
		*next--
	} else {
		v.s[i] = v.s[last]
	}
	v.s[last] = nil
	v.s = v.s[:last]
}

// clear removes every callback, handing each to f (used when the event
// closes). f must not add to v.
func (v *vector) clear(f func(*Callback)) {
	s := v.s
	v.s = nil
	for i, c := range s {
		s[i] = nil
		f(c)
	}
}
