package gid

import (
	"sync"
	"testing"
)

func TestCurrentDistinguishesLiveGoroutines(t *testing.T) {
	me := Current()
	if me == 0 {
		t.Fatal("Current returned the zero ID")
	}
	if again := Current(); again != me {
		t.Fatalf("Current changed within one goroutine: %x then %x", me, again)
	}
	const n = 16
	ids := make([]ID, n)
	var start, done sync.WaitGroup
	start.Add(n)
	done.Add(n)
	release := make(chan struct{})
	for i := range n {
		go func() {
			defer done.Done()
			ids[i] = Current()
			start.Done()
			<-release // stay alive so no descriptor is reused
		}()
	}
	start.Wait()
	seen := map[ID]bool{me: true}
	for i, id := range ids {
		if seen[id] {
			t.Fatalf("goroutine %d shares ID %x with another live goroutine", i, id)
		}
		seen[id] = true
	}
	close(release)
	done.Wait()
}

func BenchmarkCurrent(b *testing.B) {
	for b.Loop() {
		_ = Current()
	}
}
