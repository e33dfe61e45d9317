// Command e1gnet is the gnet (github.com/panjf2000/gnet/v2) comparator for
// workload E1: an echo server whose event loops run the callbacks on the
// goroutine that waits in epoll_wait. It is a module of its own, so that
// uvevent's go.mod does not depend on gnet.
//
// Usage:
//
//	e1gnet [-loops N] [port]
//
// It follows bench/cmd/e1load's server contract: it listens on 127.0.0.1
// (port 0 or none: a free port, picked before gnet binds it), prints
// "listening 127.0.0.1:PORT stats" on stdout once it accepts connections
// (it reports its allocations: bench/internal/serverstats), and
// echoes every byte back until it is killed (e1load sends SIGTERM). With -loops N (default 1)
// it runs N event loops, each with a listening socket of its own on the
// port (SO_REUSEPORT), the kernel sharing the connections among them.
package main

import (
	"fmt"
	"net"
	"os"
	"strconv"

	"github.com/panjf2000/gnet/v2"

	"github.com/uvevent/uvevent/bench/internal/serverargs"
	"github.com/uvevent/uvevent/bench/internal/serverstats"
)

func main() {
	port, loops := serverargs.Parse("e1gnet", "loops", "event loops (one listening socket each, SO_REUSEPORT)")
	if err := run(port, loops); err != nil {
		serverargs.Exit("e1gnet", err)
	}
}

// echo is the server: every byte read is written back in the same callback.
type echo struct {
	gnet.BuiltinEventEngine
	addr string
}

// OnBoot prints the ready line: the listening sockets are bound by now.
func (e *echo) OnBoot(gnet.Engine) gnet.Action {
	serverstats.Ready(e.addr)
	return gnet.None
}

// OnTraffic writes back what the connection's buffer holds. Write copies
// what the socket does not take at once into the connection's outbound
// buffer, so the bytes read can be discarded after it.
func (e *echo) OnTraffic(c gnet.Conn) gnet.Action {
	buf, _ := c.Next(-1)
	if _, err := c.Write(buf); err != nil {
		return gnet.Close
	}
	return gnet.None
}

func run(port string, loops int) error {
	if port == "0" {
		p, err := freePort()
		if err != nil {
			return err
		}
		port = strconv.Itoa(p)
	}
	e := &echo{addr: net.JoinHostPort("127.0.0.1", port)}
	return gnet.Run(e, "tcp4://"+e.addr,
		gnet.WithMulticore(loops > 1),
		gnet.WithNumEventLoop(loops),
		gnet.WithReusePort(loops > 1),
		gnet.WithTCPNoDelay(gnet.TCPNoDelay),
		gnet.WithLogger(stderrLogger{}))
}

// freePort returns a port on 127.0.0.1 that was free a moment ago: with
// SO_REUSEPORT each of gnet's listening sockets would otherwise bind a port
// of its own.
func freePort() (int, error) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// stderrLogger is gnet's logger: warnings and errors go to stderr, the rest
// nowhere (stdout carries the ready line alone).
type stderrLogger struct{}

func (stderrLogger) Debugf(string, ...any) {}
func (stderrLogger) Infof(string, ...any)  {}
func (stderrLogger) Warnf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "e1gnet: "+format+"\n", args...)
}
func (stderrLogger) Errorf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "e1gnet: "+format+"\n", args...)
}
func (stderrLogger) Fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "e1gnet: "+format+"\n", args...)
	os.Exit(1)
}
