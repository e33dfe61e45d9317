// Command chat is a line-based chat server: every line a client sends goes to
// every other client, a client silent for -idle is disconnected, and SIGINT or
// SIGTERM (or the end of run's context) says goodbye to every client, closes
// them and the listener, and ends the program.
//
//	go run ./examples/chat -addr 127.0.0.1:7000 [-idle 1m] [-driver libuv|go]
//
// Each client's idle timeout is one timer, refreshed by each line (Node's
// timeout.refresh()). Everything runs on the reactor's loop goroutine: the
// client set needs no lock.
//
// A slow client is dropped: a client that does not read what it is sent
// is disconnected when its queue reaches the IO's high-water mark (Send
// refuses with uv.ErrQueueFull, 1 MiB by default), and the others hear
// "* <name> dropped: too slow". The drop is an Abort, not a Close: a Close
// would linger, still writing the queue to a client that does not read;
// Abort resets the connection at once (the client reads ECONNRESET) and
// the bytes dropped are reported to the reactor's logger. So the server
// holds at most about 1 MiB per client, and a client that stops reading
// never holds the others back.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"

	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "chat:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("chat", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:7000", "the address to listen on")
	idle := fs.Duration("idle", time.Minute, "disconnect a client silent this long")
	var driver reactor.Driver
	fs.Var(&driver, "driver", "the reactor's driver: libuv, go or auto")
	if err := fs.Parse(args); err != nil {
		return err
	}
	r, err := reactor.New(reactor.Options{Driver: driver})
	if err != nil {
		return err
	}
	defer r.Close()
	l, err := uv.Listen(r, "tcp", *addr)
	if err != nil {
		return err
	}
	clients := map[*uv.IO]string{} // name by connection
	var broadcast func(from *uv.IO, format string, a ...any)
	broadcast = func(from *uv.IO, format string, a ...any) {
		msg := []byte(fmt.Sprintf(format, a...))
		var slow []*uv.IO
		for c := range clients {
			if c != from && errors.Is(c.Send(msg), uv.ErrQueueFull) {
				slow = append(slow, c)
			}
		}
		for _, c := range slow {
			name := clients[c]
			delete(clients, c) // its reads' end says no "left"
			c.Abort()          // reset at once: no lingering close for a client that does not read
			broadcast(nil, "* %s dropped: too slow\n", name)
		}
	}
	l.OnAccept(func(c *uv.IO, err error) {
		if err != nil {
			return
		}
		name := c.RemoteAddr().String()
		clients[c] = name
		broadcast(c, "* %s joined\n", name)
		idleTimer, _ := r.NewTimer(*idle, 0) // each line read pushes it back: Refresh
		idleTimer.OnFire(func(error) {
			c.Send([]byte("* idle timeout\n"))
			c.Close()
		})
		idleTimer.Start()
		uv.ReadLines(c, func(line []byte, err error) {
			if err != nil { // io.EOF, closed by the idle timer or the shutdown
				idleTimer.Close()
				c.Close()
				if _, ok := clients[c]; ok {
					delete(clients, c)
					broadcast(c, "* %s left\n", name)
				}
				return
			}
			idleTimer.Refresh()
			broadcast(c, "%s: %s\n", name, line)
		})
	})
	if err := l.Start(); err != nil {
		return err
	}
	sigs, err := uv.NewSignal(r, syscall.SIGINT, syscall.SIGTERM)
	if err != nil {
		return err
	}
	shutdown := func() {
		l.Close()
		sigs.Close()
		broadcast(nil, "* server shutting down\n")
		all := clients
		clients = nil // no "left" for those closed here
		for c := range all {
			c.Close()
		}
	}
	sigs.OnSignal(func(syscall.Signal, error) { shutdown() })
	if err := sigs.Start(); err != nil {
		return err
	}
	defer context.AfterFunc(ctx, func() { r.Post(shutdown) })() // ctx's end: the same shutdown
	fmt.Fprintf(stdout, "listening on %s\n", l.Addr())
	return r.Run(context.Background())
}
