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
	t := &Timer{where: inNone}
	g.names[t], g.byName[name] = name, t
	return t
}

func (g *wheelRig) insert(name string, due int64) { g.w.insert(g.timer(name), due) }
func (g *wheelRig) remove(name string)            { g.w.remove(g.timer(name)) }

// advance runs the wheel to now and returns the names fired by this call.
func (g *wheelRig) advance(now int64) []string {
	start := len(g.fired)
	g.w.advance(now, func(t *Timer) {
		if t.where != inNone {
			panic(fmt.Sprintf("timer %s fired while still queued (where=%d)", g.names[t], t.where))
		}
		g.fired = append(g.fired, g.names[t])
		if g.onFire != nil {
			g.onFire(t)
		}
	})
	return slices.Clone(g.fired[start:])
}

// check verifies the wheel's bookkeeping against what should be queued.
func (g *wheelRig) check(t *testing.T, queued int) {
	t.Helper()
	if g.w.count != queued {
		t.Errorf("count = %d, want %d", g.w.count, queued)
	}
	if g.w.firing {
		t.Error("firing still set outside advance")
	}
	inSlots := 0
	for i := range g.w.slots {
		for x := g.w.slots[i].head; x != nil; x = x.next {
			inSlots++
		}
		bit := g.w.bits[i>>6]&(1<<(i&63)) != 0
		if bit != (g.w.slots[i].head != nil) {
			t.Errorf("slot %d: bit=%v but list empty=%v", i, bit, g.w.slots[i].head == nil)
		}
	}
	if inSlots != g.w.n {
		t.Errorf("n = %d, but the slots hold %d timers", g.w.n, inSlots)
	}
}

func TestWheelSameMillisecondFiresInInsertionOrder(t *testing.T) {
	for _, due := range []int64{0, 7, wheelSize - 1, wheelSize, 3 * wheelSize} {
		for _, wrap := range []bool{false, true} {
			t.Run(fmt.Sprintf("due=%d/seq wraps=%v", due, wrap), func(t *testing.T) {
				g := newWheelRig()
				if wrap {
					g.w.seq = math.MaxUint32 - 2 // the sequence wraps among these timers
				}
				want := []string{"e", "b", "d", "a", "c"}
				for _, n := range want {
					g.insert(n, due)
				}
				g.check(t, len(want))
				if got := g.advance(due); !cmp.Equal(got, want) {
					t.Errorf("fired %v, want %v", got, want)
				}
				g.check(t, 0)
			})
		}
	}
}

func TestWheelFiresInDueOrder(t *testing.T) {
	type ins struct {
		name string
		due  int64
	}
	tests := []struct {
		name  string
		start int64 // advance here first (fires nothing), to place the cursor
		ins   []ins
		steps []int64 // successive values of now
		want  [][]string
	}{
		{
			name:  "slots",
			ins:   []ins{{"c", 30}, {"a", 10}, {"b", 20}, {"a2", 10}},
			steps: []int64{15, 30},
			want:  [][]string{{"a", "a2"}, {"b", "c"}},
		},
		{
			name:  "slots and far heap",
			ins:   []ins{{"far2", 3 * wheelSize}, {"near", 5}, {"far1", wheelSize + 1}, {"edge", wheelSize - 1}, {"far0", wheelSize}},
			steps: []int64{4 * wheelSize},
			want:  [][]string{{"near", "edge", "far0", "far1", "far2"}},
		},
		{
			name:  "after migration",
			ins:   []ins{{"h1", 5000}, {"h3", 9000}, {"h2", 5000}, {"s", 100}, {"h0", 4500}},
			steps: []int64{100, 4499, 4500, 5001, 8999, 9000},
			want:  [][]string{{"s"}, {}, {"h0"}, {"h1", "h2"}, {}, {"h3"}},
		},
		{
			name:  "wrap-around of the slot index",
			start: wheelSize - 10,
			ins:   []ins{{"x", wheelSize + 3}, {"w", wheelSize - 2}, {"y", 2*wheelSize - 12}, {"z", 2*wheelSize - 11}},
			steps: []int64{wheelSize, 2 * wheelSize},
			want:  [][]string{{"w"}, {"x", "y", "z"}},
		},
		{
			name:  "heap timer due before slot timers after a jump",
			start: 10,
			ins:   []ins{{"h", 20000}, {"s", 4000}},
			steps: []int64{3999, 30000},
			want:  [][]string{{}, {"s", "h"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := newWheelRig()
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

func TestWheelRemove(t *testing.T) {
	tests := []struct {
		name   string
		remove []string
		want   []string
	}{
		{"nothing", nil, []string{"r1", "r2", "s1", "s2", "s3", "t", "h1", "h2", "h3"}},
		{"ready head", []string{"r1"}, []string{"r2", "s1", "s2", "s3", "t", "h1", "h2", "h3"}},
		{"ready tail", []string{"r2"}, []string{"r1", "s1", "s2", "s3", "t", "h1", "h2", "h3"}},
		{"slot head middle tail", []string{"s1", "s2", "s3"}, []string{"r1", "r2", "t", "h1", "h2", "h3"}},
		{"slot middle", []string{"s2"}, []string{"r1", "r2", "s1", "s3", "t", "h1", "h2", "h3"}},
		{"heap root", []string{"h1"}, []string{"r1", "r2", "s1", "s2", "s3", "t", "h2", "h3"}},
		{"heap inner and last", []string{"h3", "h2"}, []string{"r1", "r2", "s1", "s2", "s3", "t", "h1"}},
		{"twice is a no-op", []string{"t", "t"}, []string{"r1", "r2", "s1", "s2", "s3", "h1", "h2", "h3"}},
		{"everything", []string{"h2", "r1", "s3", "t", "s1", "h1", "r2", "h3", "s2"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := newWheelRig()
			g.advance(100) // cursor 101: dues below it go to the ready list
			g.insert("r1", 50)
			g.insert("r2", 99)
			g.insert("s1", 200)
			g.insert("s2", 200)
			g.insert("s3", 200)
			g.insert("t", 300)
			g.insert("h1", 101+wheelSize)
			g.insert("h2", 101+2*wheelSize)
			g.insert("h3", 101+3*wheelSize)
			g.check(t, 9)
			for _, n := range tc.remove {
				g.remove(n)
				if w := g.timer(n).where; w != inNone {
					t.Fatalf("after remove(%s), where = %d", n, w)
				}
			}
			g.check(t, len(tc.want))
			got := g.advance(101 + 3*wheelSize)
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("fired (-want +got):\n%s", diff)
			}
			g.check(t, 0)
		})
	}
}

// A fire callback may remove timers that have not fired yet: they must not
// fire, and the count must stay right.
func TestWheelRemoveFromInsideFire(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(g *wheelRig) // inserts; the first advance fires from 60
		victims []string          // removed by a's callback
		want    []string
	}{
		{
			name: "next one in the same slot",
			setup: func(g *wheelRig) {
				g.insert("a", 70)
				g.insert("b", 70)
				g.insert("c", 70)
			},
			victims: []string{"b"},
			want:    []string{"a", "c"},
		},
		{
			name: "last one in the same slot and one in the heap",
			setup: func(g *wheelRig) {
				g.insert("a", 70)
				g.insert("b", 70)
				g.insert("h", 70+wheelSize)
				g.insert("h2", 71+wheelSize)
			},
			victims: []string{"b", "h"},
			want:    []string{"a", "h2"},
		},
		{
			name: "next one in the ready list",
			setup: func(g *wheelRig) {
				g.insert("a", 10) // below the cursor (61): ready
				g.insert("b", 20)
				g.insert("c", 30)
			},
			victims: []string{"b"},
			want:    []string{"a", "c"},
		},
		{
			name: "last one in the ready list",
			setup: func(g *wheelRig) {
				g.insert("a", 10)
				g.insert("b", 20)
				g.insert("s", 70)
			},
			victims: []string{"b"},
			want:    []string{"a", "s"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := newWheelRig()
			g.advance(60)
			tc.setup(g)
			queued := g.w.count
			g.onFire = func(x *Timer) {
				if g.names[x] == "a" {
					for _, v := range tc.victims {
						g.remove(v)
					}
				}
			}
			got := g.advance(100 + 2*wheelSize)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("fired (-want +got):\n%s", diff)
			}
			g.check(t, queued-len(tc.want)-len(tc.victims))
			// The wheel must still work: a timer inserted now fires once.
			g.onFire = nil
			g.insert("after", 200+2*wheelSize)
			g.check(t, 1)
			if got := g.advance(200 + 2*wheelSize); !cmp.Equal(got, []string{"after"}) {
				t.Errorf("later timer: fired %v, want [after]", got)
			}
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
			if w := g.timer("late").where; w != inReady {
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

// wheelModel is the wheel's contract, written the slow and obvious way:
// timers due before the cursor (or due by now while an advance fires) wait
// on a FIFO ready list and fire first in the next advance; the others fire,
// once due, in order of (due, insertion sequence).
type wheelModel struct {
	cursor  int64
	now     int64
	firing  bool
	seq     uint64
	entries map[int]*modelEntry
	ready   []int // FIFO
	batch   []int // the ready list being fired by the running advance
}

type modelEntry struct {
	due   int64
	seq   uint64
	ready bool
}

func (m *wheelModel) insert(id int, due int64) {
	m.seq++
	e := &modelEntry{due: due, seq: m.seq}
	limit := m.cursor
	if m.firing {
		limit = max(limit, m.now+1)
	}
	if due < limit {
		e.ready = true
		m.ready = append(m.ready, id)
	}
	m.entries[id] = e
}

func (m *wheelModel) remove(id int) {
	if e, ok := m.entries[id]; ok {
		delete(m.entries, id)
		if e.ready {
			m.ready = slices.DeleteFunc(m.ready, func(x int) bool { return x == id })
			m.batch = slices.DeleteFunc(m.batch, func(x int) bool { return x == id })
		}
	}
}

func (m *wheelModel) begin(now int64) {
	m.firing, m.now = true, now
	m.batch, m.ready = m.ready, nil
}

// pop returns the timer that must fire next in the running advance, or -1.
func (m *wheelModel) pop() int {
	if len(m.batch) > 0 {
		id := m.batch[0]
		m.batch = m.batch[1:]
		delete(m.entries, id)
		return id
	}
	best := -1
	for id, e := range m.entries {
		if e.ready || e.due > m.now {
			continue
		}
		if b := m.entries[best]; best < 0 || e.due < b.due || e.due == b.due && e.seq < b.seq {
			best = id
		}
	}
	if best >= 0 {
		delete(m.entries, best)
	}
	return best
}

func (m *wheelModel) end() {
	m.firing = false
	m.cursor = max(m.cursor, m.now+1)
}

func (m *wheelModel) next() int64 {
	if len(m.ready) > 0 {
		return m.cursor - 1
	}
	n := int64(-1)
	for _, e := range m.entries {
		if n < 0 || e.due < n {
			n = e.due
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
		name := "outside callbacks"
		if inCallbacks {
			name = "in callbacks"
		}
		t.Run(name, func(t *testing.T) {
			for seed := uint64(1); seed <= 4; seed++ {
				if !runWheelModel(t, seed, inCallbacks) {
					return
				}
			}
		})
	}
}

func runWheelModel(t *testing.T, seed uint64, inCallbacks bool) bool {
	t.Helper()
	const ops, pool = 6000, 300
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	w := &wheel{}
	m := &wheelModel{entries: map[int]*modelEntry{}}
	timers := make([]*Timer, pool)
	ids := map[*Timer]int{}
	for i := range timers {
		timers[i] = &Timer{where: inNone}
		ids[timers[i]] = i
	}
	var now int64
	var fails []string
	fail := func(format string, a ...any) {
		if len(fails) < 5 {
			fails = append(fails, fmt.Sprintf("seed %d: ", seed)+fmt.Sprintf(format, a...))
		}
	}
	// randomDue picks a due time around now: some already past, most within
	// the wheel's span, some in the far heap.
	randomDue := func() int64 {
		switch rng.IntN(10) {
		case 0:
			return max(0, now-rng.Int64N(30))
		case 1, 2:
			return now + wheelSize + rng.Int64N(4*wheelSize)
		default:
			return now + rng.Int64N(60)
		}
	}
	insertOne := func() {
		i := rng.IntN(pool)
		if _, queued := m.entries[i]; queued || timers[i].where != inNone {
			return
		}
		due := randomDue()
		w.insert(timers[i], due)
		m.insert(i, due)
	}
	removeOne := func() {
		i := rng.IntN(pool)
		w.remove(timers[i])
		m.remove(i)
	}
	fire := func(x *Timer) {
		want := m.pop()
		if got := ids[x]; got != want {
			fail("at now=%d fired timer %d (due %d), model expects %d", now, got, x.due, want)
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
	for op := 0; op < ops && len(fails) == 0; op++ {
		switch r := rng.IntN(10); {
		case r < 4:
			insertOne()
		case r < 6:
			removeOne()
		default:
			switch rng.IntN(20) {
			case 0:
				now += 2*wheelSize + rng.Int64N(10*wheelSize) // a long sleep
			default:
				now += rng.Int64N(25)
			}
			m.begin(now)
			w.advance(now, fire)
			if extra := m.pop(); extra >= 0 {
				fail("advance(%d) did not fire timer %d (due %d)", now, extra, timers[extra].due)
			}
			m.end()
		}
		if w.count != len(m.entries) {
			fail("after op %d: count = %d, model holds %d", op, w.count, len(m.entries))
		}
		if got, want := w.next(), m.next(); got != want {
			fail("after op %d (now=%d): next() = %d, model says %d", op, now, got, want)
		}
	}
	for _, f := range fails {
		t.Error(f)
	}
	return len(fails) == 0
}
