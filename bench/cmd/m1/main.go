// Command m1 is uvevent's side of workload M1 (docs/benchmarks.md): the memory
// of one armed timer, Go heap plus C heap (a timer holds no C memory), to
// compare with a malloc'd uv_timer_t (bench/c/m1_sizes.c).
package main

import (
	"fmt"
	"os"
	"runtime"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
)

func main() {
	const n = 100_000
	r, err := reactor.New(reactor.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "m1:", err)
		os.Exit(1)
	}
	defer r.Close()
	cb := event.NewCallback(func(event.Event, any, error) {})
	timers := make([]*reactor.Timer, n)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	r.Call(func() {
		for i := range timers {
			t, _ := r.NewTimer(time.Hour, 0)
			t.AddCallback(cb)
			t.Start()
			timers[i] = t
		}
	})
	runtime.GC()
	runtime.ReadMemStats(&after)
	per := (after.HeapAlloc - before.HeapAlloc) / n
	fmt.Printf("M1 uvevent timer_heap_bytes_per=%d c_bytes_per=0\n", per)
	runtime.KeepAlive(timers)
}
