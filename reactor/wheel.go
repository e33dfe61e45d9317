package reactor

import "math/bits"

// wheel is the reactor's timer queue, kept on the Go side so that arming,
// stopping and firing a timer costs no cgo crossing and no libuv handle.
// Time is the loop's clock in whole milliseconds, as in libuv: it is read
// once per turn, and timers due in the same millisecond fire in the order
// they were started.
//
// Timers due within wheelSize ms of the cursor sit in one slot per
// millisecond (a FIFO list; insert and remove are O(1)); later ones wait in a
// min-heap (O(log n)) and move into the wheel as the cursor comes near. A
// bitmap of non-empty slots finds the next deadline in at most 64 word reads.
// Timers that are already due (timeout 0, or started while their slot is
// being fired) go to the ready list and fire on the next turn, never in the
// pass that is running.
const (
	wheelBits = 12
	wheelSize = 1 << wheelBits
	wheelMask = wheelSize - 1
)

// Where a timer is queued.
const (
	inNone int32 = -1 - iota
	inWheel
	inReady
	// values ≥ 0 are positions in the heap
)

type tlist struct{ head, tail *Timer }

func (l *tlist) push(t *Timer) {
	t.next, t.prev = nil, l.tail
	if l.tail != nil {
		l.tail.next = t
	} else {
		l.head = t
	}
	l.tail = t
}

func (l *tlist) unlink(t *Timer) {
	if t.prev != nil {
		t.prev.next = t.next
	} else {
		l.head = t.next
	}
	if t.next != nil {
		t.next.prev = t.prev
	} else {
		l.tail = t.prev
	}
	t.next, t.prev = nil, nil
}

type wheel struct {
	cursor int64 // next millisecond to fire; slots hold due in [cursor, cursor+wheelSize)
	firing bool  // inside advance: a timer due by until goes to ready
	until  int64 // the now of the running advance
	n      int   // timers in slots
	slots  [wheelSize]tlist
	bits   [wheelSize / 64]uint64
	ready  tlist
	far    []*Timer // min-heap on (due, seq)
	seq    uint32
	count  int // all queued timers
}

// insert queues t to fire at due.
func (w *wheel) insert(t *Timer, due int64) {
	w.seq++
	t.seq = w.seq
	t.due = due
	w.count++
	switch {
	case due < w.cursor || w.firing && due <= w.until:
		t.where = inReady
		w.ready.push(t)
	case due < w.cursor+wheelSize:
		w.toSlot(t)
	default:
		w.heapPush(t)
	}
}

func (w *wheel) toSlot(t *Timer) {
	s := t.due & wheelMask
	t.where = inWheel
	w.slots[s].push(t)
	w.bits[s>>6] |= 1 << (s & 63)
	w.n++
}

// remove takes t out of the queue, wherever it is.
func (w *wheel) remove(t *Timer) {
	switch {
	case t.where == inNone:
		return
	case t.where == inReady:
		w.ready.unlink(t)
	case t.where == inWheel:
		s := t.due & wheelMask
		w.slots[s].unlink(t)
		if w.slots[s].head == nil {
			w.bits[s>>6] &^= 1 << (s & 63)
		}
		w.n--
	default:
		w.heapRemove(int(t.where))
	}
	t.where = inNone
	w.count--
}

// advance fires, in order, every timer due at or before now.
func (w *wheel) advance(now int64, fire func(*Timer)) {
	w.firing = true
	w.until = now
	// Fire the timers that were ready before this advance began: they
	// precede, in start order (seq), any timer made ready while firing.
	last := w.seq
	for t := w.ready.head; t != nil && int32(t.seq-last) <= 0; t = w.ready.head {
		w.ready.unlink(t)
		t.where = inNone
		w.count--
		fire(t)
	}
	for w.cursor <= now {
		if w.n == 0 {
			// Nothing in the slots: jump to the next heap deadline, or
			// past now, instead of stepping through empty milliseconds.
			if len(w.far) == 0 || w.far[0].due > now {
				w.cursor = now + 1
				w.migrate()
				break
			}
			w.cursor = w.far[0].due
			w.migrate()
		}
		s := w.cursor & wheelMask
		l := &w.slots[s]
		for t := l.head; t != nil; t = l.head {
			l.unlink(t)
			w.n--
			t.where = inNone
			w.count--
			fire(t)
		}
		w.bits[s>>6] &^= 1 << (s & 63)
		w.cursor++
		w.migrate()
	}
	w.firing = false
}

// migrate moves heap timers that came within the wheel's span into slots.
func (w *wheel) migrate() {
	for len(w.far) > 0 && w.far[0].due < w.cursor+wheelSize {
		t := w.far[0]
		w.heapRemove(0)
		w.toSlot(t)
	}
}

// next returns the earliest due time, or -1 when nothing is queued. A ready
// timer makes it return now's lower bound, cursor-1 (fire at once).
func (w *wheel) next() int64 {
	if w.ready.head != nil {
		return w.cursor - 1
	}
	if w.n > 0 {
		start := w.cursor & wheelMask
		for i := 0; i <= wheelSize/64; i++ {
			word := (int(start>>6) + i) % (wheelSize / 64)
			b := w.bits[word]
			if i == 0 {
				b &= ^uint64(0) << (start & 63)
			}
			if b != 0 {
				s := int64(word<<6 + bits.TrailingZeros64(b))
				return w.cursor + (s-start+wheelSize)&wheelMask
			}
		}
	}
	if len(w.far) > 0 {
		return w.far[0].due
	}
	return -1
}

// The far heap, ordered by (due, seq); each timer knows its position.

func (w *wheel) less(i, j int) bool {
	a, b := w.far[i], w.far[j]
	// seq wraps: compare it the wrap-safe way (two timers due in the same
	// millisecond are never 2³¹ starts apart).
	return a.due < b.due || a.due == b.due && int32(a.seq-b.seq) < 0
}

func (w *wheel) swap(i, j int) {
	w.far[i], w.far[j] = w.far[j], w.far[i]
	w.far[i].where = int32(i)
	w.far[j].where = int32(j)
}

func (w *wheel) heapPush(t *Timer) {
	t.where = int32(len(w.far))
	w.far = append(w.far, t)
	w.up(len(w.far) - 1)
}

func (w *wheel) heapRemove(i int) {
	last := len(w.far) - 1
	if i != last {
		w.swap(i, last)
	}
	w.far[last] = nil
	w.far = w.far[:last]
	if i != last {
		if !w.down(i) {
			w.up(i)
		}
	}
}

func (w *wheel) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !w.less(i, p) {
			return
		}
		w.swap(i, p)
		i = p
	}
}

func (w *wheel) down(i int) bool {
	start := i
	for {
		c := 2*i + 1
		if c >= len(w.far) {
			break
		}
		if r := c + 1; r < len(w.far) && w.less(r, c) {
			c = r
		}
		if !w.less(c, i) {
			break
		}
		w.swap(i, c)
		i = c
	}
	return i > start
}
