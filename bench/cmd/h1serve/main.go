// Command h1serve is the server of workload H1: net/http serving a small
// response, over uv.Listener (-uv) or over net.Listen (the comparator).
//
// Usage:
//
//	h1serve [-uv] [-driver libuv|go] [-stats] [port]
//
// It follows bench/cmd/e1load's server contract (bench/internal/serverproc):
// it listens on 127.0.0.1 (port 0 or none: the kernel picks one), prints
// "listening 127.0.0.1:PORT" on stdout once it accepts connections, and
// serves until it is killed. Every request gets a 200 with a 13-byte body;
// net/http keeps connections alive unless the client asks to close them.
// With -stats it prints on stderr, every second, the counts per request:
// allocations, bytes, goroutines made, and over uv.Listener the
// functions queued to the loop, its turns and its wake-ups.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"

	"github.com/uvevent/uvevent/bench/internal/driverflag"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

func main() {
	overUV := flag.Bool("uv", false, "serve over uv.Listener (default: net.Listen)")
	driver := driverflag.Var()
	stats := flag.Bool("stats", false, "print the counts per request on stderr every second")
	flag.Parse()
	port := "0"
	if flag.NArg() > 1 {
		fmt.Fprintln(os.Stderr, "usage: h1serve [-uv] [-driver libuv|go] [-stats] [port]")
		os.Exit(2)
	}
	if flag.NArg() == 1 {
		port = flag.Arg(0)
	}
	if err := run(*overUV, reactor.Options{Driver: *driver}, port, *stats); err != nil {
		fmt.Fprintln(os.Stderr, "h1serve:", err)
		os.Exit(1)
	}
}

var body = []byte("hello, world\n")

func handle(w http.ResponseWriter, _ *http.Request) {
	served.Add(1)
	w.Header().Set("Content-Type", "text/plain")
	w.Write(body)
}

func run(overUV bool, opts reactor.Options, port string, stats bool) error {
	addr := net.JoinHostPort("127.0.0.1", port)
	var ln net.Listener
	var r *reactor.Reactor
	served := make(chan error, 1)
	if overUV {
		var err error
		r, err = reactor.New(opts)
		if err != nil {
			return err
		}
		defer r.Close()
		uln, err := uv.Listen(r, "tcp4", addr)
		if err != nil {
			return err
		}
		ln = uln
		go func() { served <- r.Serve(context.Background()) }()
	} else {
		var err error
		if ln, err = net.Listen("tcp4", addr); err != nil {
			return err
		}
	}
	fmt.Printf("listening %s\n", ln.Addr())
	if stats {
		go printStats(os.Stderr, r)
	}
	go func() { served <- http.Serve(ln, http.HandlerFunc(handle)) }()
	return <-served
}
