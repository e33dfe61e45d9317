//go:build ignore

// The standard library's twin of dnsfan (main.go), for comparison: a
// goroutine per name on Go's resolver, a context per lookup under the
// context of all.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"sync"
	"time"
)

// defaultNames are looked up when no name is given.
var defaultNames = []string{
	"localhost", "127.0.0.1", "127.0.0.2", "127.1.2.3", "10.0.0.1",
	"192.0.2.1", "198.51.100.7", "203.0.113.9", "::1", "fe80::1",
	"2001:db8::1", "0x7f.1", "localhost.", "LOCALHOST", "127.0.0.1.",
	"name.invalid", "no-such-host.invalid", "x.test.invalid", "-bad-", "a..b",
}

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "dnsfan:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout io.Writer) error {
	flags := flag.NewFlagSet("dnsfan", flag.ContinueOnError)
	timeout := flags.Duration("timeout", 2*time.Second, "the bound of each lookup")
	deadline := flags.Duration("deadline", 5*time.Second, "the bound of all the lookups")
	if err := flags.Parse(args); err != nil {
		return err
	}
	names := flags.Args()
	if len(names) == 0 {
		names = defaultNames
	}
	ctx, cancel := context.WithTimeout(ctx, *deadline)
	defer cancel()
	addrs := make([][]netip.Addr, len(names))
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(ctx, *timeout)
			defer cancel()
			addrs[i], errs[i] = net.DefaultResolver.LookupNetIP(ctx, "ip", name)
		}()
	}
	wg.Wait()
	for i, name := range names {
		switch {
		case errors.Is(errs[i], context.DeadlineExceeded) && ctx.Err() == nil: // this lookup's own
			fmt.Fprintf(stdout, "%s: failed: timed out after %v\n", name, *timeout)
		case errs[i] != nil:
			fmt.Fprintf(stdout, "%s: failed: %v\n", name, errs[i])
		default:
			fmt.Fprintf(stdout, "%s:", name)
			for _, a := range addrs[i] {
				fmt.Fprintf(stdout, " %v", a.Unmap()) // a literal IPv4 comes back as ::ffff:a.b.c.d
			}
			fmt.Fprintln(stdout)
		}
	}
	return nil
}
