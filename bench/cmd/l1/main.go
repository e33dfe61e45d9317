// Command l1 measures timer lateness: N one-shot timers with timeouts
// uniform in [0, max), each started from the loop (some after the turn's
// cached clock has gone stale), and for each the time from Start to its
// callback minus its timeout. It prints how many fired early (must be 0:
// a timer never fires before its timeout has passed since Start) and the
// lateness at the minimum, p10, p25, p50, p75, p90, p99 and the maximum, for the chosen driver.
package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"time"

	"github.com/uvevent/uvevent/bench/internal/driverflag"
	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
)

func main() {
	n := flag.Int("n", 10000, "timers")
	maxTimeout := flag.Duration("max", 20*time.Millisecond, "timeouts are uniform in [0, max)")
	driver := driverflag.Var()
	flag.Parse()
	if err := run(*n, *maxTimeout, *driver); err != nil {
		fmt.Fprintln(os.Stderr, "l1:", err)
		os.Exit(1)
	}
}

func run(n int, maxTimeout time.Duration, driver reactor.Driver) error {
	impl := driverflag.Impl(driver)
	r, err := reactor.New(reactor.Options{Driver: driver})
	if err != nil {
		return err
	}
	defer r.Close()
	late := make([]time.Duration, 0, n)
	early := 0
	rng := rand.New(rand.NewPCG(1, 2))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- r.Serve(ctx) }()
	for i := range n {
		// Each start is its own operation on the running loop; every
		// 500th comes after a millisecond of work in the same operation.
		err = r.Call(func() {
			timeout := time.Duration(rng.Int64N(int64(maxTimeout)))
			tm, err := r.NewTimer(timeout, 0)
			if err != nil {
				panic(err)
			}
			var start time.Time
			event.Subscribe(tm, func(event.Event, any, error) {
				d := time.Since(start) - timeout
				if d < 0 {
					early++
				}
				late = append(late, d)
			})
			if i%500 == 0 {
				spin(time.Millisecond) // the turn's cached clock goes stale
			}
			start = time.Now()
			tm.Start()
		})
		if err != nil {
			return err
		}
		if i%100 == 0 {
			time.Sleep(time.Millisecond) // let the loop park now and then
		}
	}
	for {
		var done bool
		r.Call(func() { done = len(late) == n })
		if done {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if err := <-served; err != nil && err != context.Canceled {
		return err
	}
	slices.Sort(late)
	q := func(p float64) int64 { return late[int(p*float64(len(late)-1))].Microseconds() }
	fmt.Printf("L1 %s early=%d min_us=%d p10_us=%d p25_us=%d p50_us=%d p75_us=%d p90_us=%d p99_us=%d max_us=%d\n",
		impl, early, q(0), q(0.1), q(0.25), q(0.5), q(0.75), q(0.9), q(0.99), q(1))
	return nil
}

func spin(d time.Duration) {
	for t := time.Now(); time.Since(t) < d; {
	}
}
