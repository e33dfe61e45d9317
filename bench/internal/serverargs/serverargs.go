// Package serverargs reads the command line of a comparator echo server of
// workload E1 (bench/cmd/e1gnet, e1nbio): one count flag (event loops,
// pollers) and an optional port, as bench/cmd/e1load's server contract
// gives it.
package serverargs

import (
	"flag"
	"fmt"
	"os"
)

// Parse parses the command line of the server name: the flag countFlag (a
// count, at least 1, default 1, described by countUsage) and an optional
// port ("0" when none: any free port). A command line it cannot take is
// told on stderr and ends the process with status 2.
func Parse(name, countFlag, countUsage string) (port string, count int) {
	n := flag.Int(countFlag, 1, countUsage)
	flag.Parse()
	if flag.NArg() > 1 || *n < 1 {
		fmt.Fprintf(os.Stderr, "usage: %s [-%s N] [port]\n", name, countFlag)
		os.Exit(2)
	}
	port = "0"
	if flag.NArg() == 1 {
		port = flag.Arg(0)
	}
	return port, *n
}

// Exit ends the server name that could not serve: err on stderr, status 1.
func Exit(name string, err error) {
	fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
	os.Exit(1)
}
