// Command t1afterfunc is the Go standard library comparator for workload T1:
// N one-shot time.AfterFunc timers with deadlines uniform in [0,100) ms.
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	n := flag.Int("n", 1000000, "number of timers")
	seed := flag.Uint64("seed", 1, "PRNG seed for the deadlines")
	flag.Parse()
	if *n <= 0 {
		fmt.Fprintln(os.Stderr, "t1afterfunc: -n must be positive")
		os.Exit(1)
	}

	rng := rand.New(rand.NewPCG(*seed, 0))
	var fired atomic.Int64
	done := make(chan struct{})
	total := int64(*n)
	fire := func() {
		if fired.Add(1) == total {
			close(done)
		}
	}

	start := time.Now()
	for range *n {
		time.AfterFunc(time.Duration(rng.IntN(100))*time.Millisecond, fire)
	}
	<-done
	wall := time.Since(start)

	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		fmt.Fprintln(os.Stderr, "t1afterfunc: getrusage:", err)
		os.Exit(1)
	}
	fmt.Printf("T1 time-afterfunc wall_ns=%d peak_rss_kib=%d fired=%d\n",
		wall.Nanoseconds(), ru.Maxrss, fired.Load())
}
