// Command t1 is uvevent's side of workload T1 (docs/benchmarks.md): N one-shot
// timers with deadlines uniform in [0,100) ms, each released after firing
// (a one-shot timer is stopped when it fires and leaves the wheel; nothing
// holds it after that).
// It prints one result line for bench/cmd/benchtable.
package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/uvevent/uvevent/bench/internal/driverflag"
	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
)

func main() {
	n := flag.Int("n", 1_000_000, "timers")
	seed := flag.Uint64("seed", 1, "PRNG seed")
	prof := flag.String("cpuprofile", "", "write a CPU profile here")
	driver := driverflag.Var()
	flag.Parse()
	if *prof != "" {
		f, err := os.Create(*prof)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "t1:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	if err := run(*n, *seed, *driver); err != nil {
		fmt.Fprintln(os.Stderr, "t1:", err)
		pprof.StopCPUProfile()
		os.Exit(1)
	}
}

func run(n int, seed uint64, driver reactor.Driver) error {
	impl := driverflag.Impl(driver)
	r, err := reactor.New(reactor.Options{Driver: driver})
	if err != nil {
		return err
	}
	defer r.Close()
	rng := rand.New(rand.NewPCG(seed, seed))
	fired := 0
	cb := event.NewCallback(func(event.Event, any, error) { fired++ })
	start := time.Now()
	var cerr error
	r.Call(func() {
		for range n {
			t, err := r.NewTimer(time.Duration(rng.IntN(100))*time.Millisecond, 0)
			if err == nil {
				err = t.AddCallback(cb)
			}
			if err == nil {
				err = t.Start()
			}
			if err != nil {
				cerr = err
				return
			}
		}
	})
	if cerr != nil {
		return cerr
	}
	if err := r.Run(context.Background()); err != nil {
		return err
	}
	wall := time.Since(start)
	if fired != n {
		return fmt.Errorf("fired %d of %d", fired, n)
	}
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	fmt.Printf("T1 %s wall_ns=%d peak_rss_kib=%d fired=%d\n", impl, wall.Nanoseconds(), ru.Maxrss, fired)
	return nil
}
