//go:build gc && !race

package reactor

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"
)

// These tests read the signal's word: they are for the build that parks
// through the runtime (signal.go).

// Two goroutines that put at the same time into a signal whose taker is
// parked are a broken baton too: one of them wakes the taker, the other
// panics, unless the take came in between; neither readies the taker a
// second time (the runtime would throw "bad g->status in ready", which no
// recover catches).
func TestSignalRacingPutsOnAParkedTaker(t *testing.T) {
	rounds := 20_000
	if testing.Short() {
		rounds = 2_000
	}
	var s signal
	s.init()
	for range rounds {
		got := make(chan bool)
		go func() { got <- s.take() }()
		for s.state.Load() == sigEmpty { // parked, its descriptor published
			runtime.Gosched()
		}
		var panics atomic.Int32
		var wg sync.WaitGroup
		var start sync.WaitGroup
		start.Add(1)
		for range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() {
					if recover() != nil {
						panics.Add(1)
					}
				}()
				start.Wait()
				s.put(true)
			}()
		}
		start.Done()
		wg.Wait()
		if !<-got {
			t.Fatal("take = false")
		}
		// Either the second put found the first one's value not yet taken
		// (it panics), or it came after the take (its value waits for the
		// next one).
		switch n := panics.Load(); {
		case n == 1 && s.state.Load() == sigEmpty:
		case n == 0 && s.state.Load() == sigTrue:
			if !s.take() {
				t.Fatal("the second put's value: take = false")
			}
		default:
			t.Fatalf("%d of the two racing puts panicked, the word left is %d", n, s.state.Load())
		}
	}
}

// A goroutine parked in take keeps nothing pinned: the collector may move
// (shrink) its stack while it is parked, and it resumes on the moved stack
// with its frames intact. The signal holds the goroutine's descriptor, not
// a pointer into its stack.
func TestSignalParkedStackMoves(t *testing.T) {
	var s signal
	s.init()
	type out struct {
		before, after uintptr
		sum           int
	}
	res := make(chan out)
	go func() {
		grow(2000) // a big stack, then a small frame: the collector shrinks it
		var local [16]int
		for i := range local {
			local[i] = i
		}
		before := uintptr(unsafe.Pointer(&local))
		s.take()
		sum := 0
		for _, v := range local {
			sum += v
		}
		res <- out{before, uintptr(unsafe.Pointer(&local)), sum}
	}()
	for s.state.Load() == sigEmpty {
		runtime.Gosched()
	}
	for range 4 {
		runtime.GC()
	}
	s.put(true)
	o := <-res
	if o.sum != 120 {
		t.Errorf("the parked goroutine's frame sums to %d after its wake, want 120", o.sum)
	}
	if o.before == o.after {
		t.Log("the stack did not move while parked (the collector did not shrink it); the test shows less")
	} else {
		t.Logf("the stack moved while parked: %#x -> %#x", o.before, o.after)
	}
}

//go:noinline
func grow(n int) int {
	var pad [64]byte
	pad[n%64] = byte(n)
	if n == 0 {
		return int(pad[0])
	}
	return grow(n-1) + int(pad[n%64])
}

// A second goroutine taking while one is parked in take is a broken baton
// too: it panics, and leaves the first parked for the put, which wakes it
// with its value (it neither takes the parked goroutine for a value nor
// strands it).
func TestSignalSecondTakerPanics(t *testing.T) {
	var s signal
	s.init()
	first := make(chan bool)
	go func() { first <- s.take() }()
	for s.state.Load() == sigEmpty { // until the first taker is parked
		runtime.Gosched()
	}
	second := make(chan any)
	go func() {
		defer func() { second <- recover() }()
		s.take()
	}()
	if p := <-second; p == nil {
		t.Fatal("a second take while one is parked returned, want a panic")
	}
	s.put(true)
	if v := <-first; !v {
		t.Fatal("the parked taker woke with false, want the true put")
	}
}
