// Command e1uv is uvevent's echo server for workload E1 (docs/benchmarks.md), on
// uv.Listener and uv.IO.
//
// Usage:
//
//	e1uv [-conn] [-driver libuv|go] [-reactors N] [-cpuprofile FILE] [port]
//
// It listens on 127.0.0.1 (port 0 or none: the kernel picks one), prints
// "listening 127.0.0.1:PORT stats" on stdout once it accepts connections
// (it reports its allocations: bench/internal/serverstats), and
// echoes every byte back until SIGTERM or SIGINT, as bench/c/e1_echo.c and
// bench/cmd/e1net do (bench/cmd/e1load states the contract).
//
// By default the echo runs in the IO's callbacks on the loop goroutine:
// each read is a view of the C buffer libuv read into, written back with
// Send (uv_try_write first, a copy queued only for what the socket does not
// take). With -conn, each connection is a net.Conn served by a goroutine of
// its own (Read and Write), as a net server would be, over uvevent. With
// -reactors N (default 1), N reactors each listen on the port with a socket
// of their own (SO_REUSEPORT), the kernel sharing the connections among
// them, each reactor serving its own on its own goroutine.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"strconv"
	"syscall"

	"github.com/uvevent/uvevent/bench/internal/driverflag"
	"github.com/uvevent/uvevent/bench/internal/serverstats"
	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

func main() {
	conn := flag.Bool("conn", false, "serve each connection as a net.Conn on a goroutine")
	prof := flag.String("cpuprofile", "", "write a CPU profile to this file")
	reactors := flag.Int("reactors", 1, "reactors, one listening socket each (SO_REUSEPORT)")
	driver := driverflag.Var()
	flag.Parse()
	port := "0"
	if flag.NArg() > 1 || *reactors < 1 {
		fmt.Fprintln(os.Stderr, "usage: e1uv [-conn] [-driver libuv|go] [-reactors N] [-cpuprofile FILE] [port]")
		os.Exit(2)
	}
	if flag.NArg() == 1 {
		port = flag.Arg(0)
	}
	if err := run(reactor.Options{Driver: *driver}, port, *reactors, *conn, *prof); err != nil {
		fmt.Fprintln(os.Stderr, "e1uv:", err)
		os.Exit(1)
	}
}

func run(opts reactor.Options, port string, reactors int, conn bool, prof string) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	lc := uv.ListenConfig{ReusePort: reactors > 1}
	var rs []*reactor.Reactor
	defer func() {
		for _, r := range rs {
			r.Close()
		}
	}()
	var addr net.Addr
	// The listeners are event references: one nobody holds is closed by the
	// collector, and with it the connections its callbacks hold.
	var lns []*uv.Listener
	defer func() { runtime.KeepAlive(lns) }()
	for range reactors {
		r, err := reactor.New(opts)
		if err != nil {
			return err
		}
		rs = append(rs, r)
		ln, err := lc.Listen(r, "tcp4", "127.0.0.1:"+port)
		if err != nil {
			return err
		}
		lns = append(lns, ln)
		if addr == nil {
			// The others listen on the port the first one has.
			addr = ln.Addr()
			port = strconv.Itoa(addr.(*net.TCPAddr).Port)
		}
		if conn {
			go acceptLoop(ln)
		} else if err := serveCallbacks(ln); err != nil {
			return err
		}
	}
	if prof != "" {
		f, err := os.Create(prof)
		if err != nil {
			return err
		}
		defer f.Close()
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	serverstats.Ready(addr.String())
	errs := make(chan error, len(rs))
	for _, r := range rs {
		go func() { errs <- r.Serve(ctx) }()
	}
	for range rs {
		if err := <-errs; err != nil && ctx.Err() == nil {
			return err
		}
	}
	return nil
}

// serveCallbacks echoes in callbacks: no goroutine per connection. The
// open connections are held in a set (touched on the loop goroutine only):
// an IO nobody holds is closed by the collector.
func serveCallbacks(ln *uv.Listener) error {
	open := map[*uv.IO]struct{}{}
	echo := event.NewCallback(func(ev event.Event, res any, err error) {
		c := uv.IOOf(ev)
		if err == nil {
			err = c.Send(c.Result(res))
		}
		if err != nil {
			delete(open, c)
			c.Close()
		}
	})
	if _, err := event.Subscribe(ln, func(_ event.Event, res any, err error) {
		c, ok := res.(*uv.IO)
		if !ok {
			if !errors.Is(err, event.ErrClosed) {
				fmt.Fprintln(os.Stderr, "e1uv: accept:", err)
			}
			return
		}
		open[c] = struct{}{}
		if err := c.AddCallback(echo); err != nil || c.Start() != nil {
			delete(open, c)
			c.Close()
		}
	}); err != nil {
		return err
	}
	return ln.Start()
}

// acceptLoop serves each connection on a goroutine of its own, through
// net.Conn's Read and Write.
func acceptLoop(ln *uv.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			buf := make([]byte, 64<<10)
			for {
				n, err := c.Read(buf)
				if n > 0 {
					if _, err := c.Write(buf[:n]); err != nil {
						return
					}
				}
				if err != nil {
					return
				}
			}
		}()
	}
}
