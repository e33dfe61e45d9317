package reactor

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// wheelRig is a wheel with named timers and a record of what fired.
type wheelRig struct {
	w      *wheel
	names  map[*Timer]string
	byName map[string]*Timer
	fired  []string
	onFire func(t *Timer) // runs after the firing is recorded, inside advance
}

func newWheelRig() *wheelRig {
	return &wheelRig{w: &wheel{}, names: map[*Timer]string{}, byName: map[string]*Timer{}}
}

// timer returns the timer called name, creating it unqueued.
func (g *wheelRig) timer(name string) *Timer {
	if t, ok := g.byName[name]; ok {
		return t
	}
	t := &Timer{}
	g.names[t], g.byName[name] = name, t
	return t
}

func (g *wheelRig) insert(name string, due int64) { g.w.insert(g.timer(name), due) }
func (g *wheelRig) remove(name string)            { g.w.remove(g.timer(name)) }

// advance runs the wheel to now and returns the names fired by this call.
func (g *wheelRig) advance(now int64) []string {
	start := len(g.fired)
	g.w.advance(now, func(t *Timer) {
		if t.where() != inNone {
			panic(fmt.Sprintf("timer %s fired while still queued (where=%d)", g.names[t], t.where()))
		}
		g.fired = append(g.fired, g.names[t])
		if g.onFire != nil {
			g.onFire(t)
		}
	})
	return slices.Clone(g.fired[start:])
}

// check verifies the wheel's bookkeeping: count, n, bitmap, heap positions.
func (g *wheelRig) check(t *testing.T, queued int) {
	t.Helper()
	checkWheel(t, g.w, queued)
}

// checkWheel verifies w's bookkeeping: count, n, bitmap, the queues'
// positions and holes, heap positions.
func checkWheel(t *testing.T, w *wheel, queued int) {
	t.Helper()
	g := struct{ w *wheel }{w}
	inSlots := 0
	for i := range g.w.slots {
		n := checkQueue(t, fmt.Sprint("slot ", i), &g.w.slots[i], inWheel)
		inSlots += n
		if bit := g.w.bits[i>>6]&(1<<(i&63)) != 0; bit != (n > 0) {
			t.Errorf("slot %d: bit=%v, holds %d", i, bit, n)
		}
	}
	inReadyQ := checkQueue(t, "ready", &g.w.ready, inReady)
	for i, x := range g.w.far {
		if x.t.where() != inHeap || x.t.pos() != int32(i) {
			t.Errorf("heap[%d]: where=%d pos=%d", i, x.t.where(), x.t.pos())
		}
	}
	if g.w.busy != nil {
		t.Errorf("busy queue left set outside advance")
	}
	if g.w.count != queued || g.w.n != inSlots || inSlots+inReadyQ+len(g.w.far) != queued || g.w.firing {
		t.Errorf("count=%d n=%d firing=%v; hold %d in slots, %d ready, %d in the heap; want %d queued",
			g.w.count, g.w.n, g.w.firing, inSlots, inReadyQ, len(g.w.far), queued)
	}
}

// checkQueue verifies one queue: its timers know their place in it, its
// holes are nil, its live count is right and its chunks cover its tail. It
// returns the timers it holds.
func checkQueue(t *testing.T, name string, q *queue, where uint32) int {
	t.Helper()
	n, capacity := 0, 0
	for k := range q.chunks() {
		c := q.chunk(k)
		if len(c) != chunkSize(int32(k)) {
			t.Errorf("%s: chunk %d holds %d, want %d", name, k, len(c), chunkSize(int32(k)))
		}
		capacity += len(c)
	}
	if int(q.tail) > capacity || q.tail == 0 && q.chunks() > 0 {
		t.Errorf("%s: tail %d with %d chunks (%d positions)", name, q.tail, q.chunks(), capacity)
		return 0
	}
	for i := range q.tail {
		x := *q.at(i)
		if x == nil {
			continue
		}
		n++
		if x.where() != where || x.pos() != i {
			t.Errorf("%s[%d]: where=%d pos=%d", name, i, x.where(), x.pos())
		}
	}
	if int(q.live) != n {
		t.Errorf("%s: live=%d, holds %d", name, q.live, n)
	}
	return n
}

// Timers fire in due order across slots and heap, in insertion order within
// one millisecond (also when the insertion sequence wraps).
func TestWheelFiresInDueOrder(t *testing.T) {
	type ins struct {
		name string
		due  int64
	}
	same := func(due int64) []ins { return []ins{{"e", due}, {"b", due}, {"d", due}, {"a", due}, {"c", due}} }
	tests := []struct {
		name  string
		start int64 // advance here first (fires nothing), to place the cursor
		seq   uint32
		ins   []ins
		steps []int64 // successive values of now
		want  [][]string
	}{
		{"same ms in a slot", 0, 0, same(7), []int64{7}, [][]string{{"e", "b", "d", "a", "c"}}},
		{"same ms in the heap", 0, 0, same(3 * wheelSize), []int64{3 * wheelSize}, [][]string{{"e", "b", "d", "a", "c"}}},
		{"same ms in the heap, seq wraps", 0, math.MaxUint32 - 2, same(wheelSize), []int64{wheelSize}, [][]string{{"e", "b", "d", "a", "c"}}},
		{"same ms ready", 100, 0, same(50), []int64{100}, [][]string{{"e", "b", "d", "a", "c"}}},
		{"slots", 0, 0, []ins{{"c", 30}, {"a", 10}, {"b", 20}, {"a2", 10}},
			[]int64{15, 30}, [][]string{{"a", "a2"}, {"b", "c"}}},
		{"slots and far heap", 0, 0,
			[]ins{{"far2", 3 * wheelSize}, {"near", 5}, {"far1", wheelSize + 1}, {"edge", wheelSize - 1}, {"far0", wheelSize}},
			[]int64{4 * wheelSize}, [][]string{{"near", "edge", "far0", "far1", "far2"}}},
		{"after migration", 0, 0, []ins{{"h1", 5000}, {"h3", 9000}, {"h2", 5000}, {"s", 100}, {"h0", 4500}},
			[]int64{100, 4499, 4500, 5001, 8999, 9000}, [][]string{{"s"}, {}, {"h0"}, {"h1", "h2"}, {}, {"h3"}}},
		{"wrap-around of the slot index", wheelSize - 10, 0,
			[]ins{{"x", wheelSize + 3}, {"w", wheelSize - 2}, {"y", 2*wheelSize - 12}, {"z", 2*wheelSize - 11}},
			[]int64{wheelSize, 2 * wheelSize}, [][]string{{"w"}, {"x", "y", "z"}}},
		{"heap timer after slot timers across a jump", 10, 0, []ins{{"h", 20000}, {"s", 4000}},
			[]int64{3999, 30000}, [][]string{{}, {"s", "h"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := newWheelRig()
			g.w.seq = tc.seq
			if got := g.advance(tc.start); len(got) != 0 {
				t.Fatalf("empty wheel fired %v", got)
			}
			for _, in := range tc.ins {
				g.insert(in.name, in.due)
			}
			queued := len(tc.ins)
			g.check(t, queued)
			for i, now := range tc.steps {
				got := g.advance(now)
				if !cmp.Equal(got, tc.want[i], cmpopts.EquateEmpty()) {
					t.Errorf("advance(%d) fired %v, want %v", now, got, tc.want[i])
				}
				queued -= len(got)
				g.check(t, queued)
			}
			if n := g.w.next(); n != -1 {
				t.Errorf("next() on the emptied wheel = %d, want -1", n)
			}
		})
	}
}

// Removing a timer from the ready list, a slot or the heap keeps it from
// firing, before advance or from inside the callback of the first timer to
// fire (a, or r0 when ready timers are removed). Setup: the cursor is at
// 101; r* are ready, a and s* share a slot, t has a later one, h* are in
// the heap.
func TestWheelRemove(t *testing.T) {
	all := []string{"r1", "r2", "a", "s1", "s2", "s3", "t", "h1", "h2", "h3"}
	tests := []struct {
		name   string
		inFire bool // removed by a's callback rather than before advance
		remove []string
	}{
		{"nothing", false, nil},
		{"ready head and tail", false, []string{"r1", "r2"}},
		{"slot head middle tail", false, []string{"s1", "s2", "s3"}},
		{"slot middle", false, []string{"s2"}},
		{"heap root", false, []string{"h1"}},
		{"heap inner and last", false, []string{"h3", "h2"}},
		{"twice is a no-op", false, []string{"t", "t"}},
		{"everything", false, all},
		{"in fire: next one in the same slot", true, []string{"s1"}},
		{"in fire: last one in the same slot and the heap root", true, []string{"s3", "h1"}},
		{"in fire: one in a later slot and the heap", true, []string{"t", "h3", "h2"}},
		{"in fire: the rest of the ready list", true, []string{"r1"}},
		{"in fire: the last of the ready list", true, []string{"r2"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := newWheelRig()
			g.advance(100) // cursor 101: dues below it go to the ready list
			first := "a"
			if slices.Contains(tc.remove, "r1") || slices.Contains(tc.remove, "r2") {
				first = "r0" // a ready timer fires first and removes
				g.insert(first, 10)
			}
			dues := map[string]int64{"r1": 50, "r2": 99, "a": 200, "s1": 200, "s2": 200, "s3": 200,
				"t": 300, "h1": 101 + wheelSize, "h2": 101 + 2*wheelSize, "h3": 101 + 3*wheelSize}
			for _, n := range all {
				g.insert(n, dues[n])
			}
			var want []string
			if first == "r0" {
				want = append(want, "r0")
			}
			for _, n := range all {
				if !slices.Contains(tc.remove, n) {
					want = append(want, n)
				}
			}
			if tc.inFire {
				g.onFire = func(x *Timer) {
					if g.names[x] == first {
						for _, n := range tc.remove {
							g.remove(n)
						}
					}
				}
			} else {
				for _, n := range tc.remove {
					g.remove(n)
					if w := g.timer(n).where(); w != inNone {
						t.Fatalf("after remove(%s), where = %d", n, w)
					}
				}
				g.check(t, len(want))
			}
			got := g.advance(101 + 3*wheelSize)
			if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("fired (-want +got):\n%s", diff)
			}
			g.check(t, 0)
			// The wheel still works: timers inserted now fire once.
			g.onFire = nil
			g.insert("after", 200+3*wheelSize)
			g.insert("ready", 0)
			if got := g.advance(200 + 3*wheelSize); !cmp.Equal(got, []string{"ready", "after"}) {
				t.Errorf("later timers fired %v, want [ready after]", got)
			}
			g.check(t, 0)
		})
	}
}

// A timer inserted by a fire callback with a due time not after now is put
// on the ready list: it fires in the next advance, never in the running one.
func TestWheelInsertDuringAdvanceFiresNextAdvance(t *testing.T) {
	const now = 100
	tests := []struct {
		name   string
		fireAt int64 // due of the timer whose callback inserts "late"
		due    int64 // due of "late"
	}{
		{"due at the slot being fired, cursor caught up", now, now},
		{"due before the cursor", now, now - 50},
		{"due at now while the cursor catches up", 90, now},
		{"due between the cursor and now", 90, 95},
		{"due at the slot being fired, cursor behind now", 90, 90},
		{"inserted by a ready timer", 5, now},
		{"inserted by a ready timer, due before the cursor", 5, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := newWheelRig()
			g.advance(10)
			g.insert("a", tc.fireAt)
			g.onFire = func(x *Timer) {
				if g.names[x] == "a" {
					g.insert("late", tc.due)
				}
			}
			if got := g.advance(now); !cmp.Equal(got, []string{"a"}) {
				t.Errorf("advance(%d) fired %v, want [a] (late must wait for the next advance)", now, got)
			}
			g.onFire = nil
			if w := g.timer("late").where(); w != inReady {
				t.Errorf("late is queued at where=%d, want the ready list (%d)", w, inReady)
			}
			if n := g.w.next(); n > now {
				t.Errorf("next() = %d with late (due %d) queued, want ≤ %d", n, tc.due, now)
			}
			if got := g.advance(now); !cmp.Equal(got, []string{"late"}) {
				t.Errorf("next advance(%d) fired %v, want [late]", now, got)
			}
			g.check(t, 0)
		})
	}
}

func TestWheelNext(t *testing.T) {
	tests := []struct {
		name  string
		start int64 // cursor placed at start+1
		dues  []int64
		want  int64
	}{
		{"empty", 0, nil, -1},
		{"empty after a jump", 1e6, nil, -1},
		{"one slot", 0, []int64{42}, 42},
		{"earliest of several slots", 0, []int64{300, 42, 4000, 43}, 42},
		{"slot at the cursor", 9, []int64{10}, 10},
		{"same word as the cursor", 99, []int64{120, 101}, 101},
		{"slot index wraps around", wheelSize - 6, []int64{wheelSize + 2, wheelSize + 10}, wheelSize + 2},
		{"wrapped slot below the cursor's word", 2*wheelSize - 700, []int64{3*wheelSize - 800, 3*wheelSize - 750}, 3*wheelSize - 800},
		{"wrapped slot in the cursor's word", wheelSize + 40, []int64{2*wheelSize + 35}, 2*wheelSize + 35},
		{"heap only", 0, []int64{5 * wheelSize, 2 * wheelSize}, 2 * wheelSize},
		{"slots before heap", 0, []int64{5 * wheelSize, wheelSize - 1}, wheelSize - 1},
		{"ready list", 100, []int64{7, 500}, 100},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := newWheelRig()
			g.advance(tc.start)
			for i, d := range tc.dues {
				g.insert(fmt.Sprint(i), d)
			}
			if got := g.w.next(); got != tc.want {
				t.Errorf("next() = %d, want %d", got, tc.want)
			}
			g.check(t, len(tc.dues))
		})
	}
}

// A far jump of the clock with only heap timers must jump between their
// deadlines, not step through every millisecond (1<<50 steps would never end).
func TestWheelLargeJump(t *testing.T) {
	for _, now := range []int64{1e9, 1 << 50} {
		t.Run(fmt.Sprint(now), func(t *testing.T) {
			g := newWheelRig()
			g.insert("late", now)
			g.insert("early", 5e8)
			g.insert("beyond", now+1)
			done := make(chan []string, 1)
			go func() { done <- g.advance(now) }()
			select {
			case got := <-done:
				if diff := cmp.Diff([]string{"early", "late"}, got); diff != "" {
					t.Errorf("fired (-want +got):\n%s", diff)
				}
			case <-time.After(20 * time.Second): // safety deadline only
				t.Fatal("advance over a large jump did not finish")
			}
			g.check(t, 1)
			if n := g.w.next(); n != now+1 {
				t.Errorf("next() = %d, want %d", n, now+1)
			}
			if got := g.advance(now + 1); !cmp.Equal(got, []string{"beyond"}) {
				t.Errorf("fired %v, want [beyond]", got)
			}
		})
	}
}

// wheelModel is the wheel's contract, the slow and obvious way: a timer
// due before the cursor, or due by now while an advance fires, waits on a
// FIFO ready list and fires first in the next advance; the others fire, once
// due, in order of (due, insertion sequence).
type wheelModel struct {
	cursor, now  int64
	firing       bool
	seq          uint64
	due, seqs    map[int]int64 // queued timers
	ready, batch []int         // FIFO; batch is the ready list being fired
}

func (m *wheelModel) insert(id int, due int64) {
	m.seq++
	m.due[id], m.seqs[id] = due, int64(m.seq)
	if due < m.cursor || m.firing && due <= m.now {
		m.ready = append(m.ready, id)
	}
}

func (m *wheelModel) remove(id int) {
	delete(m.due, id)
	del := func(x int) bool { return x == id }
	m.ready, m.batch = slices.DeleteFunc(m.ready, del), slices.DeleteFunc(m.batch, del)
}

// pop returns the timer that must fire next in the running advance, or -1.
func (m *wheelModel) pop() int {
	best := -1
	if len(m.batch) > 0 {
		best, m.batch = m.batch[0], m.batch[1:]
	} else {
		for id, d := range m.due {
			if d <= m.now && !slices.Contains(m.ready, id) &&
				(best < 0 || d < m.due[best] || d == m.due[best] && m.seqs[id] < m.seqs[best]) {
				best = id
			}
		}
	}
	delete(m.due, best)
	return best
}

func (m *wheelModel) next() int64 {
	if len(m.ready) > 0 {
		return m.cursor - 1
	}
	n := int64(-1)
	for _, d := range m.due {
		if n < 0 || d < n {
			n = d
		}
	}
	return n
}

// TestWheelMatchesModel runs thousands of random operations on the wheel and
// on the model in lockstep: each firing must be the one the model expects,
// and count and next() must agree after every operation. The "in callbacks"
// variant also inserts and removes timers from inside fire callbacks.
func TestWheelMatchesModel(t *testing.T) {
	for _, inCallbacks := range []bool{false, true} {
		t.Run(fmt.Sprint("in callbacks=", inCallbacks), func(t *testing.T) {
			for seed := uint64(1); seed <= 4 && !t.Failed(); seed++ {
				runWheelModel(t, seed, inCallbacks)
			}
		})
	}
}

func runWheelModel(t *testing.T, seed uint64, inCallbacks bool) {
	runWheelModelSized(t, seed, inCallbacks, 6000, 300, 60)
}

// Many timers due in a few milliseconds: slots of hundreds, across the
// queues' chunk sizes, with holes enough to compact them.
func TestWheelMatchesModelDense(t *testing.T) {
	for _, inCallbacks := range []bool{false, true} {
		t.Run(fmt.Sprint("in callbacks=", inCallbacks), func(t *testing.T) {
			for seed := uint64(1); seed <= 3 && !t.Failed(); seed++ {
				runWheelModelSized(t, seed, inCallbacks, 20000, 3000, 3)
			}
		})
	}
}

// runWheelModelSized runs ops random operations on pool timers, most due
// within spread ms of now.
func runWheelModelSized(t *testing.T, seed uint64, inCallbacks bool, ops, pool int, spread int64) {
	runWheelModelFrom(t, seed, inCallbacks, ops, pool, spread, wheelClock{far: 4 * wheelSize, sleep: 10 * wheelSize})
}

// wheelClock places a model run in time: its clock starts at start, its
// far timers are due up to far ms after now, and its long sleeps last up to
// sleep ms (beyond 2*wheelSize).
type wheelClock struct{ start, far, sleep int64 }

// runWheelModelFrom is runWheelModelSized on the clock c. Each timer that
// fires, and every queued timer now and then, must know its due
// (wheel.dueOf) as the model does.
func runWheelModelFrom(t *testing.T, seed uint64, inCallbacks bool, ops, pool int, spread int64, c wheelClock) {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	w := &wheel{}
	m := &wheelModel{due: map[int]int64{}, seqs: map[int]int64{}}
	timers, ids := make([]*Timer, pool), map[*Timer]int{}
	for i := range timers {
		timers[i] = &Timer{}
		ids[timers[i]] = i
	}
	now := c.start
	if now != 0 {
		w.advance(now, func(*Timer) { t.Fatal("an empty wheel fired") })
		m.cursor = now + 1
	}
	dues := func() (model, got map[int]int64) {
		model, got = map[int]int64{}, map[int]int64{}
		for id, d := range m.due {
			model[id], got[id] = d, w.dueOf(timers[id])
		}
		return model, got
	}
	fails := 0
	fail := func(format string, a ...any) {
		if fails++; fails <= 5 {
			t.Errorf("seed %d: "+format, append([]any{seed}, a...)...)
		}
	}
	insertOne := func() {
		i := rng.IntN(pool)
		if _, queued := m.due[i]; queued || timers[i].where() != inNone {
			return
		}
		due := now + rng.Int64N(spread) // most within the wheel's span
		switch rng.IntN(10) {
		case 0, 1:
			due = max(0, now-rng.Int64N(30)) // already past
		case 2, 3, 4:
			due = now + wheelSize + rng.Int64N(c.far) // in the far heap
		}
		w.insert(timers[i], due)
		m.insert(i, due)
	}
	removeOne := func() {
		i := rng.IntN(pool)
		w.remove(timers[i])
		m.remove(i)
	}
	fire := func(x *Timer) {
		wantDue, queued := m.due[ids[x]]
		if got, want := ids[x], m.pop(); got != want {
			fail("at now=%d fired timer %d (due %d), model expects %d", now, got, w.dueOf(x), want)
		} else if got := w.dueOf(x); !queued || got != wantDue {
			fail("at now=%d timer %d fires with due %d, model says %d (queued %v)", now, ids[x], got, wantDue, queued)
		}
		if inCallbacks {
			switch rng.IntN(4) {
			case 0:
				insertOne()
			case 1:
				removeOne()
			}
		}
	}
	for op := 0; op < ops && fails == 0; op++ {
		switch r := rng.IntN(10); {
		case r < 4:
			insertOne()
		case r < 6:
			removeOne()
		default:
			now += rng.Int64N(25)
			if rng.IntN(50) == 0 {
				now += 2*wheelSize + rng.Int64N(c.sleep) // a long sleep
			}
			m.firing, m.now, m.batch, m.ready = true, now, m.ready, nil
			w.advance(now, fire)
			if extra := m.pop(); extra >= 0 {
				fail("advance(%d) did not fire timer %d (due %d)", now, extra, w.dueOf(timers[extra]))
			}
			m.firing, m.cursor = false, max(m.cursor, now+1)
		}
		if w.count != len(m.due) {
			fail("after op %d: count = %d, model holds %d", op, w.count, len(m.due))
		}
		if op%500 == 0 {
			checkWheel(t, w, len(m.due))
			if model, got := dues(); !cmp.Equal(model, got) {
				fail("after op %d (now=%d): dues (-model +wheel):\n%s", op, now, cmp.Diff(model, got))
			}
		}
		if got, want := w.next(), m.next(); got != want {
			fail("after op %d (now=%d): next() = %d, model says %d", op, now, got, want)
		}
	}
}

// The wheel keeps only the low 32 bits of the due of a timer in a slot or
// the ready queue: runs whose clock starts just before 2³¹ ms and 2³² ms
// (the bits' wrap) and years on, with far timers due up to 2³³ ms (99 days)
// later and sleeps of up to 2³² ms (and up to 2³⁴ ms: the loop stalled for
// longer than the 32 bits tell apart), fire as the model does, and each
// timer knows its due, in the heap, in the wheel, in the ready queue and as
// it fires.
func TestWheelMatchesModelFarClock(t *testing.T) {
	year := int64(365 * 24 * time.Hour / time.Millisecond)
	for _, c := range []wheelClock{
		{start: 1<<31 - 3000, far: 4 * wheelSize, sleep: 10 * wheelSize},
		{start: 1<<32 - 3000, far: 4 * wheelSize, sleep: 10 * wheelSize},
		{start: 1<<32 - 3000, far: 1 << 33, sleep: 1 << 32},
		{start: 7*year + 12345, far: 1 << 33, sleep: 1 << 32},
		{start: 0, far: 3 * year, sleep: 1 << 31},
		// sleeps of 2³² ms and more: the due of a timer fired after one,
		// from a slot or the ready queue, is 2³² ms or more before now
		{start: 1<<32 - 3000, far: 1 << 33, sleep: 1 << 34},
		{start: 5*year + 777, far: 1 << 34, sleep: 3 << 33},
	} {
		for _, inCallbacks := range []bool{false, true} {
			t.Run(fmt.Sprintf("start=%d far=%d sleep=%d in callbacks=%v", c.start, c.far, c.sleep, inCallbacks), func(t *testing.T) {
				for seed := uint64(1); seed <= 3 && !t.Failed(); seed++ {
					runWheelModelFrom(t, seed, inCallbacks, 6000, 300, 60, c)
				}
			})
		}
	}
}

// Timers due in one far millisecond (in the heap, 2³² ms and more on)
// fire in start order, started in an order unlike their heap positions,
// with timers due a millisecond before and after them; in the heap their
// start sequence takes the place of their 32-bit due (Timer.due), which
// migrating into a slot sets.
func TestWheelFarSameDueFiresInStartOrder(t *testing.T) {
	for _, due := range []int64{1<<32 + 5, 1<<33 + wheelSize, 3 * 365 * 24 * 3600 * 1000} {
		g := newWheelRig()
		var want []string
		g.insert("after", due+1)
		for i := range 200 {
			name := fmt.Sprint(i)
			g.insert(name, due)
			want = append(want, name)
			if i%5 == 0 {
				g.insert(fmt.Sprint("before", i), due-1)
			}
		}
		g.check(t, 200+40+1)
		if got := g.w.next(); got != due-1 {
			t.Errorf("due %d: next() = %d, want %d", due, got, due-1)
		}
		if got := g.w.dueOf(g.timer("7")); got != due {
			t.Errorf("due %d: dueOf a heap timer = %d", due, got)
		}
		g.advance(due - 1)
		if got := g.w.dueOf(g.timer("7")); got != due || g.timer("7").where() != inWheel {
			t.Errorf("due %d: after migrating, dueOf = %d, where = %d", due, got, g.timer("7").where())
		}
		if got := g.advance(due); !cmp.Equal(got, want) {
			t.Errorf("due %d: fired %v, want %v", due, got, want)
		}
		if got := g.advance(due + 1); !cmp.Equal(got, []string{"after"}) {
			t.Errorf("due %d: then fired %v, want [after]", due, got)
		}
		g.check(t, 0)
	}
}

// chunkOf maps positions one to one onto the chunks' cells, in order.
func TestWheelChunkOf(t *testing.T) {
	k, off := int32(0), int32(0)
	for i := range int32(smallEnd + 5*lastChunk) {
		gk, goff := chunkOf(i)
		if gk != k || goff != off {
			t.Fatalf("chunkOf(%d) = %d, %d; want %d, %d", i, gk, goff, k, off)
		}
		if off++; int(off) == chunkSize(k) {
			k, off = k+1, 0
		}
	}
}

// A slot of thousands of timers, a third of them removed (holes, then a
// compaction by the next insert), fires the rest in start order, and the
// queues let go of their chunks once empty.
func TestWheelLargeSlot(t *testing.T) {
	const n = 3000
	g := newWheelRig()
	var want []string
	for i := range n {
		g.insert(fmt.Sprint(i), 10)
	}
	for i := range n {
		if i%3 != 1 {
			g.remove(fmt.Sprint(i))
		}
	}
	for i := range n {
		if i%3 == 1 {
			want = append(want, fmt.Sprint(i))
		}
	}
	g.check(t, n/3)
	g.insert("last", 10) // compacts the slot, two thirds holes, first
	want = append(want, "last")
	g.check(t, n/3+1)
	if q := &g.w.slots[10]; q.tail != n/3+1 {
		t.Errorf("after the compacting insert, tail = %d, want %d", q.tail, n/3+1)
	}
	if got := g.advance(10); !cmp.Equal(got, want) {
		t.Errorf("fired %d timers, want %d in start order", len(got), len(want))
	}
	g.check(t, 0)
	if c := g.w.slots[10].chunks(); c != 0 {
		t.Errorf("the fired slot keeps %d chunks", c)
	}
}

// Timers started, stopped and fired at a steady pace allocate nothing once
// the wheel has warmed up: emptied queues give their chunks to the wheel,
// which hands them to the next queue that needs one (a queue of up to 8
// timers has no list of chunks to make).
func TestWheelSteadyPaceAllocatesNothing(t *testing.T) {
	w := &wheel{}
	timers := make([]*Timer, 40)
	for i := range timers {
		timers[i] = &Timer{}
	}
	now := int64(0)
	round := func() {
		for i, x := range timers {
			w.insert(x, now+int64(i%7)) // a few slots, a few timers each
		}
		for _, x := range timers[:10] {
			w.remove(x) // stopped before they fire
		}
		now += 10
		w.advance(now, func(*Timer) {})
	}
	for range 50 {
		round()
	}
	if n := testing.AllocsPerRun(100, round); n != 0 {
		t.Errorf("a round of inserts, removes and firing allocates %v times, want 0", n)
	}
	checkWheel(t, w, 0)
}
