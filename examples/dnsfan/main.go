// Command dnsfan looks up many host names at once (uv.AddrInfo: getaddrinfo's
// hints on Go's resolver), each bounded by -timeout and all by
// -deadline, and prints each name's addresses or why it has none, in the order
// given.
//
//	go run ./examples/dnsfan [-timeout 2s] [-deadline 5s] [-driver libuv|go] [name...]
//
// With no name it looks up twenty: names and numbers that resolve offline
// (localhost, numeric addresses, /etc/hosts) and names that must fail.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/netip"
	"os"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
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
	var driver reactor.Driver
	flags.Var(&driver, "driver", "the reactor's driver: libuv, go or auto")
	if err := flags.Parse(args); err != nil {
		return err
	}
	names := flags.Args()
	if len(names) == 0 {
		names = defaultNames
	}
	r, err := reactor.New(reactor.Options{Driver: driver})
	if err != nil {
		return err
	}
	defer r.Close()
	go r.Serve(ctx)
	ctx, cancel := context.WithTimeout(ctx, *deadline)
	defer cancel()
	var lookups []*uv.AddrInfo
	refused := make([]error, len(names)) // a name no lookup can take: its line says why
	for i, name := range names {
		lookupCtx, cancel := context.WithTimeout(ctx, *timeout)
		defer cancel()
		a, err := uv.NewAddrInfo(r, name, "", uv.AddrInfoHints{Context: lookupCtx})
		if err != nil {
			refused[i] = err
			continue
		}
		lookups = append(lookups, a)
	}
	got, gotErrs, _ := event.AwaitAllSettled(ctx, lookups...)
	addrs, errs := make([][]netip.AddrPort, len(names)), refused
	for i, j := 0, 0; i < len(names); i++ {
		if refused[i] == nil {
			addrs[i], errs[i] = got[j], gotErrs[j]
			j++
		}
	}
	for i, name := range names {
		switch {
		case errors.Is(errs[i], context.DeadlineExceeded) && ctx.Err() == nil: // this lookup's own
			fmt.Fprintf(stdout, "%s: failed: timed out after %v\n", name, *timeout)
		case errs[i] != nil:
			fmt.Fprintf(stdout, "%s: failed: %v\n", name, errs[i])
		default:
			fmt.Fprintf(stdout, "%s:", name)
			for _, a := range addrs[i] {
				fmt.Fprintf(stdout, " %v", a.Addr())
			}
			fmt.Fprintln(stdout)
		}
	}
	return nil
}
