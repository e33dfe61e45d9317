// Command e1nbio is the nbio (github.com/lesismal/nbio) comparator for
// workload E1: an echo server on nbio's pollers, which read each socket
// into a buffer of their own and run the data callback on the poller's
// goroutine. It is a module of its own, so that uvevent's go.mod does not
// depend on nbio.
//
// Usage:
//
//	e1nbio [-pollers N] [port]
//
// It follows bench/cmd/e1load's server contract: it listens on 127.0.0.1
// (port 0 or none: the kernel picks one), prints "listening 127.0.0.1:PORT
// stats" on stdout once it accepts connections (it reports its allocations:
// bench/internal/serverstats), and echoes every byte back until
// it is killed (e1load sends SIGTERM). -pollers is nbio's NPoller (default
// 1, as the other servers' single loop).
package main

import (
	"net"

	"github.com/lesismal/nbio"
	"github.com/lesismal/nbio/logging"

	"github.com/uvevent/uvevent/bench/internal/serverargs"
	"github.com/uvevent/uvevent/bench/internal/serverstats"
)

func main() {
	port, pollers := serverargs.Parse("e1nbio", "pollers", "nbio poller goroutines")
	if err := run(port, pollers); err != nil {
		serverargs.Exit("e1nbio", err)
	}
	select {} // serve until killed
}

func run(port string, pollers int) error {
	logging.SetLevel(logging.LevelError)
	var addr net.Addr
	g := nbio.NewEngine(nbio.Config{
		Network: "tcp4",
		Addrs:   []string{net.JoinHostPort("127.0.0.1", port)},
		NPoller: pollers,
		// The listening socket is ours, so that the port the kernel picked
		// is known.
		Listen: func(network, address string) (net.Listener, error) {
			ln, err := net.Listen(network, address)
			if err == nil {
				addr = ln.Addr()
			}
			return ln, err
		},
	})
	// nbio's Write copies what the socket does not take at once, so the
	// read buffer can go back to nbio after it.
	g.OnData(func(c *nbio.Conn, data []byte) {
		if _, err := c.Write(data); err != nil {
			c.Close()
		}
	})
	if err := g.Start(); err != nil {
		return err
	}
	serverstats.Ready(addr.String())
	return nil
}
