package reactor

import "math/bits"

// wheel is the reactor's timer queue, kept on the Go side so that arming,
// stopping and firing a timer costs no cgo crossing and no libuv handle.
// Time is the loop's clock in whole milliseconds, as in libuv: it is read
// once per turn, and timers due in the same millisecond fire in the order
// they were started.
//
// Timers due within wheelSize ms of the cursor sit in one slot per
// millisecond (a FIFO queue; insert and remove are O(1)); later ones wait in
// a min-heap (O(log n)) and move into the wheel as the cursor comes near. A
// bitmap of non-empty slots finds the next deadline in at most 64 word
// reads. Timers that are already due (timeout 0, or started while their slot
// is being fired) go to the ready queue and fire on the next turn, never in
// the pass that is running.
//
// A queue is an array of timer pointers in chunks, not a list linked
// through the timers: a timer holds only its queue and its position in it
// (Timer.loc), so that it stays in the 80-byte size class (a million armed
// timers, workload T1, are a million of them), the collector scans the
// queues as arrays instead of chasing a chain through every timer, and a
// slot fires by reading its array in order, its timers' loads independent
// of one another. A removed timer leaves a hole (nil), skipped when the
// queue fires; a queue is compacted when an insert finds it more than half
// holes, and given back (its chunks kept for reuse, a few) when it empties.
//
// For the same reason a timer holds only the low 32 bits of its due
// millisecond (Timer.due), and only while it is in a slot or the ready
// queue, where its due is near the cursor (dueOf); a timer in the heap,
// which may be due years on, has its whole due in its heap entry, and in
// Timer.due its start sequence, for ties.
const (
	wheelBits = 12
	wheelSize = 1 << wheelBits
	wheelMask = wheelSize - 1
)

// Where a timer is queued: the top two bits of Timer.loc; the other 30 are
// its position in that queue (in the heap: its index). A queue or the heap
// therefore holds at most 2^30 timers, about 80 GiB of them: a limit no
// reactor reaches before its memory runs out.
const (
	inNone uint32 = iota
	inWheel
	inReady
	inHeap

	locShift = 30
	posMask  = 1<<locShift - 1
)

func (t *Timer) where() uint32 { return t.loc >> locShift }
func (t *Timer) pos() int32    { return int32(t.loc & posMask) }

func (t *Timer) place(where uint32, pos int32) { t.loc = where<<locShift | uint32(pos) }

// A queue's chunks grow with it: 8, 16, 32, 64, 128, then 256 timers each
// (64 B to 2 KiB), so that a slot of a few timers costs 64 bytes and a
// slot of thousands about 8 bytes a timer, with nothing ever copied.
const (
	firstChunk = 8
	lastChunk  = 256
	smallEnd   = 2*lastChunk - firstChunk // positions in the chunks of 8, 16, ..., 256
	chunkSizes = 6                        // 8 ... 256
	keepBytes  = 16 << 10                 // of chunks per size, kept for reuse by the queues
)

// chunkOf returns the chunk and the offset in it of position i.
func chunkOf(i int32) (k, off int32) {
	if i < smallEnd {
		k = int32(bits.Len32(uint32(i+firstChunk))) - 4
		return k, i + firstChunk - firstChunk<<k
	}
	i -= smallEnd
	return chunkSizes + i/lastChunk, i % lastChunk
}

// chunkSize is the capacity of chunk k.
func chunkSize(k int32) int { return firstChunk << min(k, chunkSizes-1) }

// queue is a FIFO of timers by position (see wheel). Its first chunk is
// apart from the list of the others, so that a queue of a few timers needs
// no list.
type queue struct {
	first *[firstChunk]*Timer // chunk 0, nil when the queue has no chunk
	rest  [][]*Timer          // chunks 1 on
	tail  int32               // positions in use, holes included
	live  int32               // timers queued
}

func (q *queue) at(i int32) **Timer {
	if i < firstChunk {
		return &q.first[i]
	}
	k, off := chunkOf(i)
	return &q.rest[k-1][off]
}

// chunks returns how many chunks q holds.
func (q *queue) chunks() int {
	if q.first == nil {
		return 0
	}
	return 1 + len(q.rest)
}

// chunk returns q's chunk k.
func (q *queue) chunk(k int) []*Timer {
	if k == 0 {
		return q.first[:]
	}
	return q.rest[k-1]
}

type wheel struct {
	cursor int64 // next millisecond to fire; slots hold due in [cursor, cursor+wheelSize)
	firing bool  // inside advance: a timer due by until goes to ready
	until  int64 // the now of the running advance
	batch  int32 // while the ready queue fires: its positions [0, batch) were queued before the advance
	busy   *queue
	n      int // timers in slots
	slots  [wheelSize]queue
	bits   [wheelSize / 64]uint64
	ready  queue
	far    []farTimer // min-heap on (due, start sequence: Timer.due)
	seq    uint32
	count  int // all queued timers
	free   [chunkSizes][][]*Timer
}

// farTimer is a timer in the heap, with its due; its Timer.due holds its
// start sequence.
type farTimer struct {
	t   *Timer
	due int64
}

// dueOf returns the loop millisecond at which t, queued or being fired, is
// due; its 32 bits say which millisecond near a reference the wheel knows
// exactly, whatever time advance has jumped:
//   - in a slot: due in [cursor, cursor+wheelSize);
//   - taken out to fire (advance): from a slot, due at the cursor; from the
//     ready queue, just before it (the cursor does not move while the ready
//     queue fires);
//   - in the ready queue: queued before this advance (and not fired yet),
//     due just before the cursor, the clock's reading when it was queued;
//     made ready while advance fires, due by until, that advance's now,
//     and not before the clock's reading when it was queued, at least that
//     now.
//
// Not the latest millisecond reached, for all of them: a loop that stalls
// for 2³² ms (49.7 days) or more between two advances fires timers due
// that long before its now, which a 32-bit due cannot tell from one due a
// little before it (TestWheelDueOfAcrossStallOf2To32ms).
func (w *wheel) dueOf(t *Timer) int64 {
	var top int64
	switch t.where() {
	case inHeap:
		return w.far[t.pos()].due
	case inWheel:
		return w.cursor + int64(t.due-uint32(w.cursor))
	case inNone:
		top = w.cursor
	default: // inReady
		top = w.cursor - 1
		if w.firing && (w.busy != &w.ready || t.pos() >= w.batch) {
			top = w.until
		}
	}
	return top - int64(uint32(top)-t.due)
}

// push appends t to q (never the queue being fired: see advance).
func (w *wheel) push(q *queue, t *Timer, where uint32) {
	if q.live*2 < q.tail && q.tail >= firstChunk && q != w.busy {
		w.compact(q, 0)
	}
	if k, _ := chunkOf(q.tail); int(k) == q.chunks() {
		if k == 0 {
			q.first = (*[firstChunk]*Timer)(w.chunk(0))
		} else {
			q.rest = append(q.rest, w.chunk(k))
		}
	}
	*q.at(q.tail) = t
	t.place(where, q.tail)
	q.tail++
	q.live++
}

// chunk returns an empty chunk k, reused if one is kept.
func (w *wheel) chunk(k int32) []*Timer {
	f := &w.free[min(k, chunkSizes-1)]
	if n := len(*f); n > 0 {
		c := (*f)[n-1]
		(*f)[n-1] = nil
		*f = (*f)[:n-1]
		return c
	}
	return make([]*Timer, chunkSize(k))
}

// compact moves q's timers from position from on down to position 0, in
// order, and lets go of the chunks it no longer needs.
func (w *wheel) compact(q *queue, from int32) {
	j := int32(0)
	where := inWheel
	if q == &w.ready {
		where = inReady
	}
	for i := from; i < q.tail; i++ {
		p := q.at(i)
		if t := *p; t != nil {
			*p = nil
			*q.at(j) = t
			t.place(where, j)
			j++
		}
	}
	q.tail = j
	w.trim(q)
}

// trim lets go of q's chunks past its tail, keeping up to keepBytes of
// each size for the queues to reuse: timers started and fired at a steady
// pace allocate nothing. The chunks hold only nils.
func (w *wheel) trim(q *queue) {
	keep := 0
	if q.tail > 0 {
		k, _ := chunkOf(q.tail - 1)
		keep = int(k) + 1
	}
	for k := q.chunks() - 1; k >= keep; k-- {
		if f := &w.free[min(k, chunkSizes-1)]; len(*f)*chunkSize(int32(k))*8 < keepBytes {
			*f = append(*f, q.chunk(k))
		}
		if k == 0 {
			q.first = nil
		} else {
			q.rest[k-1] = nil
		}
	}
	q.rest = q.rest[:max(keep-1, 0)]
}

// drop resets q once no timer is left in it: its positions are all holes,
// which are nil.
func (w *wheel) drop(q *queue) {
	q.tail = 0
	w.trim(q)
}

// insert queues t to fire at due.
func (w *wheel) insert(t *Timer, due int64) {
	w.seq++
	w.count++
	switch {
	case due < w.cursor || w.firing && due <= w.until:
		t.due = uint32(due)
		w.push(&w.ready, t, inReady)
	case due < w.cursor+wheelSize:
		t.due = uint32(due)
		w.toSlot(t)
	default:
		t.due = w.seq
		w.heapPush(farTimer{t, due})
	}
}

// toSlot queues t in the slot of its due (t.due, set), which is within
// wheelSize of the cursor: the slot's index is in the due's low bits.
func (w *wheel) toSlot(t *Timer) {
	s := t.due & wheelMask
	w.push(&w.slots[s], t, inWheel)
	w.bits[s>>6] |= 1 << (s & 63)
	w.n++
}

// remove takes t out of the queue, wherever it is.
func (w *wheel) remove(t *Timer) {
	switch t.where() {
	case inNone:
		return
	case inReady:
		w.unqueue(&w.ready, t)
	case inWheel:
		s := t.due & wheelMask
		q := &w.slots[s]
		w.unqueue(q, t)
		if q.live == 0 {
			w.bits[s>>6] &^= 1 << (s & 63)
		}
		w.n--
	default:
		w.heapRemove(int(t.pos()))
	}
	t.loc = 0
	w.count--
}

// unqueue leaves a hole where t was in q; an emptied queue is dropped,
// unless it is the one advance is reading.
func (w *wheel) unqueue(q *queue, t *Timer) {
	*q.at(t.pos()) = nil
	q.live--
	if q.live == 0 && q != w.busy {
		w.drop(q)
	}
}

// fireQueue fires, in order, the timers at positions [0, end) of q, each
// taken out before it fires. Timers removed meanwhile leave holes; timers
// queued meanwhile go after end (the ready queue) or to other queues (a
// slot: see advance). fire may remove from q but nothing moves in it.
func (w *wheel) fireQueue(q *queue, end int32, slot bool, fire func(*Timer)) {
	w.busy = q
	for i := int32(0); i < end; i++ {
		p := q.at(i)
		t := *p
		if t == nil {
			continue
		}
		*p = nil
		q.live--
		if slot {
			w.n--
		}
		t.loc = 0
		w.count--
		fire(t)
	}
	w.busy = nil
}

// advance fires, in order, every timer due at or before now.
func (w *wheel) advance(now int64, fire func(*Timer)) {
	w.firing = true
	w.until = now
	// Fire the timers that were ready before this advance began: they
	// precede, in start order, any timer made ready while firing, which
	// then move to the front of the ready queue.
	if end := w.ready.tail; end > 0 {
		w.batch = end
		w.fireQueue(&w.ready, end, false, fire)
		w.compact(&w.ready, end)
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
		// No timer joins this slot while it fires: one due by now goes to
		// the ready queue, a later one to another slot or the heap.
		s := w.cursor & wheelMask
		q := &w.slots[s]
		if q.tail > 0 {
			w.fireQueue(q, q.tail, true, fire)
			w.drop(q)
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
		t := w.far[0].t
		t.due = uint32(w.far[0].due)
		w.heapRemove(0)
		w.toSlot(t)
	}
}

// next returns the earliest due time, or -1 when nothing is queued. A ready
// timer makes it return now's lower bound, cursor-1 (fire at once).
func (w *wheel) next() int64 {
	if w.ready.live > 0 {
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

// The far heap, ordered by (due, start sequence); each timer knows its
// position.

func (w *wheel) less(i, j int) bool {
	a, b := &w.far[i], &w.far[j]
	// seq wraps: compare it the wrap-safe way (two timers due in the same
	// millisecond are never 2³¹ starts apart).
	return a.due < b.due || a.due == b.due && int32(a.t.due-b.t.due) < 0
}

func (w *wheel) swap(i, j int) {
	w.far[i], w.far[j] = w.far[j], w.far[i]
	w.far[i].t.place(inHeap, int32(i))
	w.far[j].t.place(inHeap, int32(j))
}

func (w *wheel) heapPush(e farTimer) {
	e.t.place(inHeap, int32(len(w.far)))
	w.far = append(w.far, e)
	w.up(len(w.far) - 1)
}

func (w *wheel) heapRemove(i int) {
	last := len(w.far) - 1
	if i != last {
		w.swap(i, last)
	}
	w.far[last] = farTimer{}
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
