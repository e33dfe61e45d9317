// Command e1net is the Go standard-library comparator for workload E1: an
// echo server with one goroutine per connection on the net package.
//
// Usage:
//
//	e1net [port]
//
// It listens on 127.0.0.1 (port 0 or none: the kernel picks one), prints
// "listening 127.0.0.1:PORT stats" on stdout once it accepts connections
// (it reports its allocations: bench/internal/serverstats), and
// echoes every byte back on each connection, through a 64 KiB buffer the
// connection's goroutine reuses, until it is killed (bench/cmd/e1load sends
// SIGTERM).
package main

import (
	"errors"
	"fmt"
	"net"
	"os"

	"github.com/uvevent/uvevent/bench/internal/serverstats"
)

func main() {
	port := "0"
	if len(os.Args) > 2 {
		fmt.Fprintln(os.Stderr, "usage: e1net [port]")
		os.Exit(2)
	}
	if len(os.Args) == 2 {
		port = os.Args[1]
	}
	ln, err := net.Listen("tcp4", net.JoinHostPort("127.0.0.1", port))
	if err != nil {
		fmt.Fprintln(os.Stderr, "e1net:", err)
		os.Exit(1)
	}
	serverstats.Ready(ln.Addr().String())
	for {
		c, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			fmt.Fprintln(os.Stderr, "e1net: accept:", err)
			continue
		}
		go echo(c)
	}
}

// echo writes back everything c sends until c is closed or fails.
func echo(c net.Conn) {
	defer c.Close()
	buf := make([]byte, 64<<10)
	for {
		n, err := c.Read(buf)
		if n > 0 {
			if _, werr := c.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}
