// Command d1uv is uvevent's side of workload D1 (docs/benchmarks.md): it looks up
// "localhost" with uv.AddrInfo -n times, at most -inflight at a time, and
// prints
//
//	D1 uvevent lookups_per_s=N      (or uvevent-go with -driver go)
//
// over the wall clock from the first lookup to the last answer, as
// bench/c/d1_getaddrinfo.c does for raw libuv (there on libuv's thread pool
// at its default size): the same hints (AF_UNSPEC, SOCK_STREAM: network
// "tcp"), and each answer's callback, on the loop goroutine, starting the
// next lookup. On either driver the lookups go to Go's resolver, each in a
// goroutine of its own (docs/architecture.md, "Lookups"); -driver go runs
// the pure-Go driver's loop.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/netip"
	"os"
	"time"

	"github.com/uvevent/uvevent/bench/internal/driverflag"
	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

func main() {
	n := flag.Int("n", 10000, "lookups")
	inFlight := flag.Int("inflight", 64, "lookups in flight at once")
	driver := driverflag.Var()
	flag.Parse()
	if err := run(*n, *inFlight, *driver); err != nil {
		fmt.Fprintln(os.Stderr, "d1uv:", err)
		os.Exit(1)
	}
}

func run(n, inFlight int, driver reactor.Driver) error {
	if n <= 0 || inFlight <= 0 {
		return fmt.Errorf("-n and -inflight must be positive")
	}
	r, err := reactor.New(reactor.Options{Driver: driver})
	if err != nil {
		return err
	}
	defer r.Close()

	var started, done int
	var failed error
	var next func()
	// One callback for every lookup: it runs on the loop goroutine, where
	// starting the next lookup runs at once.
	cb := event.NewCallback(func(_ event.Event, res any, err error) {
		done++
		if addrs, _ := res.([]netip.AddrPort); err == nil && len(addrs) == 0 {
			err = errors.New("localhost: no address")
		}
		if err != nil {
			failed = errors.Join(failed, err)
			return
		}
		next()
	})
	next = func() {
		if started >= n || failed != nil {
			return
		}
		started++
		a, err := uv.NewAddrInfo(r, "localhost", "", uv.AddrInfoHints{Network: "tcp"})
		if err == nil {
			err = a.AddCallback(cb)
		}
		if err != nil {
			failed = errors.Join(failed, err)
		}
	}
	start := time.Now()
	if err := r.Call(func() {
		for range inFlight {
			next()
		}
	}); err != nil {
		return err
	}
	if err := r.Run(context.Background()); err != nil {
		return err
	}
	wall := time.Since(start)
	if failed != nil {
		return failed
	}
	if done != n {
		return fmt.Errorf("%d of %d lookups completed", done, n)
	}
	fmt.Printf("D1 %s lookups_per_s=%d\n", driverflag.Impl(driver), int64(n)*int64(time.Second)/int64(wall))
	return nil
}
