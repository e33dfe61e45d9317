package eventref

import (
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestStaleIDNeverReachesRecycledSlot(t *testing.T) {
	var tb Table[string]
	a := tb.Add("a")
	if v, ok := tb.Get(a); !ok || v != "a" {
		t.Fatalf("Get(a) = %q, %v", v, ok)
	}
	if _, ok := tb.Remove(a); !ok {
		t.Fatal("Remove(a) failed")
	}
	b := tb.Add("b") // reuses a's slot
	if a.slot() != b.slot() {
		t.Fatalf("slot not reused: %d vs %d", a.slot(), b.slot())
	}
	if a == b {
		t.Fatal("a recycled slot issued the same ID")
	}
	if v, ok := tb.Get(a); ok {
		t.Fatalf("stale ID reached the new occupant %q", v)
	}
	if _, ok := tb.Remove(a); ok {
		t.Fatal("stale ID removed the new occupant")
	}
	if v, ok := tb.Get(b); !ok || v != "b" {
		t.Fatalf("Get(b) = %q, %v", v, ok)
	}
	if tb.Len() != 1 {
		t.Fatalf("Len = %d, want 1", tb.Len())
	}
}

func TestZeroAndForeignIDs(t *testing.T) {
	var tb Table[int]
	if _, ok := tb.Get(0); ok {
		t.Fatal("the zero ID resolved")
	}
	id := tb.Add(7)
	if id == 0 {
		t.Fatal("Add issued the zero ID")
	}
	if _, ok := tb.Get(makeID(5, 1)); ok {
		t.Fatal("an ID past the end resolved")
	}
}

func TestGenerationSkipsZeroOnWrap(t *testing.T) {
	var tb Table[int]
	id := tb.Add(1)
	tb.slots[id.slot()].gen = ^uint32(0)
	id = makeID(id.slot(), ^uint32(0))
	tb.Remove(id)
	if g := tb.slots[id.slot()].gen; g != 1 {
		t.Fatalf("generation after wrap = %d, want 1", g)
	}
}

func TestEachVisitsLiveValues(t *testing.T) {
	var tb Table[int]
	ids := []ID{tb.Add(1), tb.Add(2), tb.Add(3)}
	tb.Remove(ids[1])
	var got []int
	tb.Each(func(id ID, v int) {
		got = append(got, v)
		tb.Remove(id)
	})
	if diff := cmp.Diff([]int{1, 3}, got); diff != "" {
		t.Fatalf("Each (-want +got):\n%s", diff)
	}
	if tb.Len() != 0 {
		t.Fatalf("Len = %d after removing all", tb.Len())
	}
}

type recorder struct {
	mu  sync.Mutex
	ids []ID
}

func (r *recorder) Dropped(id ID) {
	r.mu.Lock()
	r.ids = append(r.ids, id)
	r.mu.Unlock()
}

func (r *recorder) got() []ID {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]ID(nil), r.ids...)
}

func TestTrackReportsDroppedNotClosed(t *testing.T) {
	rec := &recorder{}
	type obj struct{ _ [16]byte }
	func() {
		dropped := &obj{}
		Track(dropped, rec, 11)
		kept := &obj{}
		c := Track(kept, rec, 22)
		c.Stop() // what Close does
	}()
	deadline := time.Now().Add(10 * time.Second)
	for len(rec.got()) == 0 && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	if diff := cmp.Diff([]ID{11}, rec.got()); diff != "" {
		t.Fatalf("dropped IDs (-want +got):\n%s", diff)
	}
}
