// Command d1resolver is the Go standard-library comparator for workload D1:
// it looks up "localhost" through a net.Resolver -n times, at most
// -inflight at a time, from as many goroutines, and prints
//
//	D1 go-pure lookups_per_s=N   (or go-cgo)
//
// over the wall clock from the first lookup to the last answer.
//
// -resolver go uses the pure-Go resolver (net.Resolver{PreferGo: true});
// -resolver cgo uses the C library's getaddrinfo through cgo, which the net
// package chooses only when asked with GODEBUG=netdns=cgo in the
// environment, so the program refuses to run that mode without it. Each
// lookup asks for every address family (LookupNetIP with network "ip"), as
// getaddrinfo with AF_UNSPEC does.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/uvevent/uvevent/bench/internal/inflight"
)

func main() {
	n := flag.Int("n", 10000, "lookups")
	inFlight := flag.Int("inflight", 64, "lookups in flight at once")
	resolver := flag.String("resolver", "go", "go (pure Go) or cgo (getaddrinfo; needs GODEBUG=netdns=cgo)")
	flag.Parse()
	if err := run(*n, *inFlight, *resolver); err != nil {
		fmt.Fprintln(os.Stderr, "d1resolver:", err)
		os.Exit(1)
	}
}

func run(n, inFlight int, resolver string) error {
	if n <= 0 || inFlight <= 0 {
		return fmt.Errorf("-n and -inflight must be positive")
	}
	var r *net.Resolver
	var impl string
	switch resolver {
	case "go":
		r, impl = &net.Resolver{PreferGo: true}, "go-pure"
	case "cgo":
		if !strings.Contains(os.Getenv("GODEBUG"), "netdns=cgo") {
			return fmt.Errorf("-resolver cgo needs GODEBUG=netdns=cgo in the environment")
		}
		r, impl = &net.Resolver{}, "go-cgo"
	default:
		return fmt.Errorf("-resolver %q: want go or cgo", resolver)
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := time.Now()
	err := inflight.Run(n, inFlight, func() error {
		addrs, err := r.LookupNetIP(ctx, "ip", "localhost")
		if err == nil && len(addrs) == 0 {
			err = fmt.Errorf("localhost: no address")
		}
		return err
	})
	wall := time.Since(start)
	if err != nil {
		return err
	}
	fmt.Printf("D1 %s lookups_per_s=%d\n", impl, int64(n)*int64(time.Second)/int64(wall))
	return nil
}
