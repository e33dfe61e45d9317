package reactor

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"
)

// checkChunks verifies the wheel's chunk ownership, also inside advance:
// every chunk is held by exactly one queue or one free list, never both
// (a chunk given back while a queue still reads or writes it would let a
// later write corrupt another queue), the free lists hold only empty chunks
// of their size, and every queue's timers know their place.
func checkChunks(t *testing.T, w *wheel) {
	t.Helper()
	owner := map[unsafe.Pointer]string{}
	claim := func(c []*Timer, who string) {
		p := unsafe.Pointer(unsafe.SliceData(c))
		if prev, ok := owner[p]; ok {
			t.Errorf("chunk %p held by %s and by %s", p, prev, who)
			return
		}
		owner[p] = who
	}
	queues := func(f func(name string, q *queue, where uint32)) {
		for i := range w.slots {
			f(fmt.Sprint("slot ", i), &w.slots[i], inWheel)
		}
		f("ready", &w.ready, inReady)
	}
	queues(func(name string, q *queue, where uint32) {
		for k := range q.chunks() {
			claim(q.chunk(k), fmt.Sprintf("%s chunk %d", name, k))
		}
		checkQueue(t, name, q, where)
	})
	for size, list := range w.free {
		for i, c := range list {
			claim(c, fmt.Sprintf("free[%d][%d]", size, i))
			if len(c) != chunkSize(int32(size)) {
				t.Errorf("free[%d][%d] holds %d, want %d", size, i, len(c), chunkSize(int32(size)))
			}
			for j, x := range c {
				if x != nil {
					t.Errorf("free[%d][%d][%d] holds a timer", size, i, j)
				}
			}
		}
	}
}

// attackRun drives a wheel and the model of wheel_test.go in lockstep with
// what fire callbacks do to timers in the real reactor: stop, restart and
// reset the firing timer and the timers of its own millisecond (its slot,
// being fired), start bursts of thousands of timers in one millisecond
// (queues of 256-timer chunks), stop most of a slot (holes, compactions),
// and let the far heap's timers move in.
type attackRun struct {
	t      *testing.T
	seed   uint64
	rng    *rand.Rand
	w      *wheel
	m      *wheelModel
	timers []*Timer
	ids    map[*Timer]int
	byDue  map[int64][]int // timers started for each deadline (some since stopped)
	now    int64
	fails  int
	deep   bool // check the chunks inside callbacks too
}

func (a *attackRun) fail(format string, args ...any) {
	if a.fails++; a.fails <= 5 {
		a.t.Errorf("seed %d: "+format, append([]any{a.seed}, args...)...)
	}
}

func (a *attackRun) start(i int, due int64) {
	a.w.remove(a.timers[i]) // Reset: stop + start
	a.m.remove(i)
	a.w.insert(a.timers[i], due)
	a.m.insert(i, due)
	a.byDue[due] = append(a.byDue[due], i)
}

func (a *attackRun) stop(i int) {
	a.w.remove(a.timers[i])
	a.m.remove(i)
}

// due picks a deadline: past, now, near, in one busy millisecond, or far.
func (a *attackRun) due() int64 {
	switch r := a.rng.IntN(20); {
	case r < 2:
		return max(0, a.now-a.rng.Int64N(20))
	case r < 4:
		return a.now
	case r < 12:
		return a.now + 1 + a.rng.Int64N(40)
	case r < 15:
		return a.now + 1 + a.rng.Int64N(3) // crowded milliseconds
	default:
		return a.now + wheelSize - 5 + a.rng.Int64N(3*wheelSize) // around the heap's edge
	}
}

// sameSlot returns a timer started for due that may still be queued, or -1.
func (a *attackRun) sameSlot(due int64) int {
	l := a.byDue[due]
	if len(l) == 0 {
		return -1
	}
	return l[a.rng.IntN(len(l))]
}

func (a *attackRun) fire(x *Timer) {
	id := a.ids[x]
	if want := a.m.pop(); id != want {
		a.fail("at now=%d fired timer %d (due %d), model expects %d", a.now, id, a.w.dueOf(x), want)
	}
	if x.where() != inNone {
		a.fail("timer %d fired while queued", id)
	}
	if a.w.count != len(a.m.due) {
		a.fail("in a callback at now=%d: count=%d, model holds %d", a.now, a.w.count, len(a.m.due))
	}
	if a.deep && a.rng.IntN(200) == 0 {
		checkChunks(a.t, a.w)
	}
	due := a.w.dueOf(x)
	for range a.rng.IntN(3) {
		switch a.rng.IntN(10) {
		case 0: // restart itself, due at once: the ready queue, next advance
			a.start(id, a.now-a.rng.Int64N(2))
		case 1: // restart itself later (a periodic timer)
			a.start(id, a.now+1+a.rng.Int64N(10))
		case 2, 3: // stop one of its own millisecond, queued after it or fired
			if j := a.sameSlot(due); j >= 0 {
				a.stop(j)
			}
		case 4: // reset one of its own millisecond
			if j := a.sameSlot(due); j >= 0 {
				a.start(j, a.due())
			}
		case 5: // stop and start again, at once, one of its millisecond
			if j := a.sameSlot(due); j >= 0 {
				a.stop(j)
				a.start(j, due)
			}
		case 6:
			a.stop(a.rng.IntN(len(a.timers)))
		case 7:
			a.start(a.rng.IntN(len(a.timers)), a.due())
		case 8: // stop itself after firing: nothing to do, must be harmless
			a.stop(id)
		case 9: // stop many of its millisecond
			for _, j := range a.byDue[due] {
				if a.rng.IntN(3) != 0 {
					a.stop(j)
				}
			}
		}
	}
}

func (a *attackRun) advance(to int64) {
	a.now = to
	a.m.firing, a.m.now, a.m.batch, a.m.ready = true, to, a.m.ready, nil
	a.w.advance(to, a.fire)
	if extra := a.m.pop(); extra >= 0 {
		a.fail("advance(%d) did not fire timer %d (due %d)", to, extra, a.w.dueOf(a.timers[extra]))
	}
	a.m.firing, a.m.cursor = false, max(a.m.cursor, to+1)
	for d := range a.byDue {
		if d < a.m.cursor-1 {
			delete(a.byDue, d)
		}
	}
}

func runWheelAttack(t *testing.T, seed uint64, pool, ops int, deep bool) {
	a := &attackRun{
		t: t, seed: seed, rng: rand.New(rand.NewPCG(seed, 0xa77ac)),
		w: &wheel{}, m: &wheelModel{due: map[int]int64{}, seqs: map[int]int64{}},
		timers: make([]*Timer, pool), ids: map[*Timer]int{}, byDue: map[int64][]int{},
		deep: deep,
	}
	for i := range a.timers {
		a.timers[i] = &Timer{}
		a.ids[a.timers[i]] = i
	}
	for op := 0; op < ops && a.fails == 0; op++ {
		switch r := a.rng.IntN(20); {
		case r < 8:
			a.start(a.rng.IntN(pool), a.due())
		case r < 11:
			a.stop(a.rng.IntN(pool))
		case r == 11: // a burst: hundreds or thousands in one millisecond
			due := a.now + a.rng.Int64N(4)
			if a.rng.IntN(3) == 0 {
				due = a.now + wheelSize + a.rng.Int64N(100) // via the heap
			}
			for range a.rng.IntN(min(pool, 3000)) {
				a.start(a.rng.IntN(pool), due)
			}
		case r == 12: // stop most of a millisecond: holes, then compaction
			for _, l := range a.byDue { // one millisecond, whichever comes first
				for _, j := range l {
					if a.rng.IntN(4) != 0 {
						a.stop(j)
					}
				}
				break
			}
		case r < 18:
			a.advance(a.now + a.rng.Int64N(4))
		case r == 18:
			a.advance(a.now + a.rng.Int64N(wheelSize/2))
		default:
			a.advance(a.now + wheelSize + a.rng.Int64N(3*wheelSize)) // a long sleep
		}
		if a.w.count != len(a.m.due) {
			a.fail("after op %d: count=%d, model holds %d", op, a.w.count, len(a.m.due))
		}
		if got, want := a.w.next(), a.m.next(); got != want {
			a.fail("after op %d (now=%d): next()=%d, model %d", op, a.now, got, want)
		}
		if op%97 == 0 {
			checkChunks(t, a.w)
			checkWheel(t, a.w, len(a.m.due))
		}
	}
	checkChunks(t, a.w)
	checkWheel(t, a.w, len(a.m.due))
}

// TestWheelAttack drives the wheel with random operations in and out of
// fire callbacks against the model, checking chunk ownership as it goes.
func TestWheelAttack(t *testing.T) {
	seeds := uint64(6)
	if testing.Short() {
		seeds = 3
	}
	for seed := uint64(1); seed <= seeds && !t.Failed(); seed++ {
		runWheelAttack(t, seed, 5000, 3000, true)
	}
	for seed := uint64(100); seed <= 100+seeds && !t.Failed(); seed++ {
		runWheelAttack(t, seed, 300, 6000, true) // few timers, many reuses
	}
}

// The wheel keeps no pointer to a timer it no longer queues: holes,
// compacted positions, trimmed chunks (on the free lists or not), the ready
// queue's fired part and the heap's array past its end are all nil, so a
// stopped or fired timer that nobody else references is collected while
// the wheel lives on.
func TestWheelAttackDroppedTimersCollected(t *testing.T) {
	w := &wheel{}
	var collected atomic.Int64
	var keep []*Timer // the timers still queued at the end
	dropped := 0
	rng := rand.New(rand.NewPCG(7, 7))
	func() {
		var all []*Timer
		for i := range 6000 {
			x := &Timer{}
			runtime.AddCleanup(x, func(*atomic.Int64) { collected.Add(1) }, &collected)
			var due int64
			switch i % 4 {
			case 0, 1:
				due = 5 // one crowded slot: chunks of 256
			case 2:
				due = int64(rng.IntN(wheelSize)) // ready (due 0) or a slot
			default:
				due = wheelSize + int64(rng.IntN(wheelSize)) // the heap
			}
			w.insert(x, due)
			all = append(all, x)
		}
		for _, x := range all {
			if rng.IntN(3) == 0 {
				w.remove(x) // holes; the next inserts compact
			}
		}
		for range 200 {
			x := &Timer{}
			runtime.AddCleanup(x, func(*atomic.Int64) { collected.Add(1) }, &collected)
			w.insert(x, 5)
			all = append(all, x)
		}
		w.advance(7, func(x *Timer) {
			if rng.IntN(4) == 0 {
				w.insert(x, 6) // started again while firing: the ready queue
			}
		})
		w.advance(8, func(*Timer) {}) // the ready queue fires, compacts
		for _, x := range all {
			if x.where() != inNone {
				keep = append(keep, x)
			}
		}
		dropped = len(all) - len(keep)
	}()
	deadline := time.Now().Add(20 * time.Second)
	for collected.Load() < int64(dropped) && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	if got := collected.Load(); got != int64(dropped) {
		t.Errorf("collected %d of the %d timers the wheel let go of", got, dropped)
	}
	checkChunks(t, w)
	checkWheel(t, w, len(keep))
	runtime.KeepAlive(w)
}
