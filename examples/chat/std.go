//go:build ignore

// The standard library's twin of chat (main.go), for comparison: the same
// server with package net, a goroutine per client and a mutex over the client
// set. `go run std.go -addr 127.0.0.1:7000`.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
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
	if err := fs.Parse(args); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	l, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	var (
		mu       sync.Mutex
		clients  = map[net.Conn]string{} // name by connection
		wg       sync.WaitGroup
		shutting bool
	)
	var broadcast func(from net.Conn, format string, a ...any)
	broadcast = func(from net.Conn, format string, a ...any) {
		msg := []byte(fmt.Sprintf(format, a...))
		var slow []string
		mu.Lock()
		for c, name := range clients {
			if c == from {
				continue
			}
			c.SetWriteDeadline(time.Now().Add(time.Second))
			var ne net.Error
			if _, err := c.Write(msg); errors.As(err, &ne) && ne.Timeout() {
				delete(clients, c) // its serve says no "left"
				// Reset at once, as the reactor's Abort: what the kernel
				// still holds for a client that does not read is dropped.
				if tc, ok := c.(*net.TCPConn); ok {
					tc.SetLinger(0)
				}
				c.Close()
				slow = append(slow, name)
			}
		}
		mu.Unlock()
		for _, name := range slow {
			broadcast(nil, "* %s dropped: too slow\n", name)
		}
	}
	serve := func(c net.Conn) {
		defer wg.Done()
		name := c.RemoteAddr().String()
		sc := bufio.NewScanner(c)
		for c.SetReadDeadline(time.Now().Add(*idle)) == nil && sc.Scan() {
			broadcast(c, "%s: %s\n", name, sc.Text())
		}
		var ne net.Error
		if errors.As(sc.Err(), &ne) && ne.Timeout() {
			c.Write([]byte("* idle timeout\n"))
		}
		c.Close()
		mu.Lock()
		_, member := clients[c]
		delete(clients, c)
		gone := member && !shutting
		mu.Unlock()
		if gone {
			broadcast(c, "* %s left\n", name)
		}
	}
	go func() {
		<-ctx.Done()
		l.Close()
		broadcast(nil, "* server shutting down\n")
		mu.Lock()
		shutting = true
		for c := range clients {
			c.Close()
		}
		mu.Unlock()
	}()
	fmt.Fprintf(stdout, "listening on %s\n", l.Addr())
	for {
		c, err := l.Accept()
		if errors.Is(err, net.ErrClosed) {
			break
		} else if err != nil {
			continue // EMFILE and the like: go on serving, as libuv does
		}
		broadcast(c, "* %s joined\n", c.RemoteAddr())
		mu.Lock()
		if shutting {
			c.Close()
		} else {
			clients[c] = c.RemoteAddr().String()
			wg.Add(1)
			go serve(c)
		}
		mu.Unlock()
	}
	wg.Wait()
	return nil
}
