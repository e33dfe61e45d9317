package reactor

import (
	"runtime"
	"sync"
	"testing"
	"time"
)

// A value put before the take waits for it; a take before the put parks
// until it comes, and gets the value put, true or false.
func TestSignalPutBeforeAndAfterTake(t *testing.T) {
	var s signal
	s.init()
	s.put(true)
	if !s.take() {
		t.Error("take after put(true) = false")
	}
	s.put(false)
	if s.take() {
		t.Error("take after put(false) = true")
	}
	for _, v := range []bool{true, false} {
		got := make(chan bool)
		go func() { got <- s.take() }()
		time.Sleep(time.Millisecond) // most often parked by now; either order must work
		s.put(v)
		if g := <-got; g != v {
			t.Errorf("parked take = %v, want %v", g, v)
		}
	}
}

// Two goroutines that pass a baton back and forth through two signals, as
// cooperative coroutines do, see each other's writes to plain memory, and
// neither is lost or woken twice, whether the put or the take comes first.
func TestSignalPingPong(t *testing.T) {
	const trips = 100_000
	var a, b signal
	a.init()
	b.init()
	n := 0 // written by whoever holds the baton
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range trips {
			if !b.take() {
				t.Error("take = false")
				return
			}
			n++
			if n%64 == 0 {
				runtime.Gosched() // the other side may get there first
			}
			a.put(true)
		}
	}()
	for range trips {
		n++
		b.put(true)
		if !a.take() {
			t.Fatal("take = false")
		}
	}
	wg.Wait()
	if n != 2*trips {
		t.Errorf("n = %d, want %d", n, 2*trips)
	}
}

// A second put before the take is a broken baton: it panics rather than
// lose a wake-up or hand the baton to two goroutines.
func TestSignalPutTwicePanics(t *testing.T) {
	var s signal
	s.init()
	s.put(true)
	defer func() {
		if recover() == nil {
			t.Error("a second put did not panic")
		}
	}()
	s.put(true)
}
