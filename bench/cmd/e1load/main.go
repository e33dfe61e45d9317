// Command e1load is the load generator of workload E1 (DESIGN.md §6): it
// holds N TCP connections over loopback to an echo server and, on each,
// sends a message and waits for it to come back intact, over and over. It
// runs as a process of its own, apart from the server's.
//
// Usage:
//
//	e1load -impl NAME [-conns 50] [-size 1024] [-warmup 500ms] [-duration 3s] server-command [arg ...]
//	e1load -impl NAME -addr 127.0.0.1:PORT [...]
//
// The address, given or printed by the server, must be a loopback IP
// address. With a server command, e1load starts the server itself, so that
// it can read the server's CPU time from /proc/PID/stat. The server must
// listen on 127.0.0.1 (at the port its first argument gives, or any when
// there is none), print "listening HOST:PORT" as the first line of its stdout
// once it accepts connections, and echo every byte back. Give the server
// program itself, not a shell running it: only that process's CPU time is
// counted. e1load stops it with SIGTERM to its process group (and SIGKILL if
// it has not exited two seconds later; the server also gets SIGKILL should
// e1load die first). The raw C server bench/c/e1_echo.c and the net server
// bench/cmd/e1net follow this contract.
//
// Messages are counted only in the measuring window, which opens after the
// warm-up. e1load prints one result line:
//
//	E1 NAME msgs_per_s=N server_cpu_us_per_msg=X
//
// msgs_per_s counts round trips (one message out and back) per second over
// all connections; server_cpu_us_per_msg is the server process's user plus
// system CPU time over the window divided by the round trips in it (omitted
// with -addr). Everything stops by itself: a run takes about warm-up plus
// duration, and at most a minute more before e1load gives up.
package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/uvevent/uvevent/bench/internal/loadgen"
	"github.com/uvevent/uvevent/bench/internal/serverproc"
)

// config is what the flags ask for.
type config struct {
	impl     string
	addr     string
	server   []string
	conns    int
	size     int
	warmup   time.Duration
	duration time.Duration
}

// maxSize bounds the message size: a message is written whole before its
// echo is read, so it must fit in the sockets' buffers on the way.
const maxSize = 64 << 10

// setupTimeout bounds the server start and the dialling of all connections.
const setupTimeout = 30 * time.Second

func main() {
	var cfg config
	flag.StringVar(&cfg.impl, "impl", "", "implementation name printed in the result line (required)")
	flag.StringVar(&cfg.addr, "addr", "", "load a server already listening at this address instead of starting one")
	flag.IntVar(&cfg.conns, "conns", 50, "connections")
	flag.IntVar(&cfg.size, "size", 1024, "message size in bytes (8 to 65536)")
	flag.DurationVar(&cfg.warmup, "warmup", 500*time.Millisecond, "load before the measuring window opens")
	flag.DurationVar(&cfg.duration, "duration", 3*time.Second, "measuring window")
	flag.Parse()
	cfg.server = flag.Args()
	if err := cfg.check(); err != nil {
		fmt.Fprintln(os.Stderr, "e1load:", err)
		flag.Usage()
		os.Exit(2)
	}
	loadgen.Main("e1load", cfg.warmup+cfg.duration+setupTimeout+30*time.Second,
		func(ctx context.Context) (string, error) { return run(ctx, cfg) })
}

func (c config) check() error {
	switch {
	case c.impl == "":
		return errors.New("-impl is required")
	case (c.addr == "") == (len(c.server) == 0):
		return errors.New("give either a server command or -addr")
	case c.conns <= 0:
		return errors.New("-conns must be positive")
	case c.size < 8 || c.size > maxSize:
		return fmt.Errorf("-size must be from 8 (messages carry a sequence number) to %d", maxSize)
	case c.warmup < 0 || c.duration <= 0:
		return errors.New("-warmup must not be negative and -duration must be positive")
	}
	return nil
}

// run starts the server if asked, loads it and returns the result line.
func run(ctx context.Context, cfg config) (string, error) {
	addr := cfg.addr
	var srv *serverproc.Server
	if len(cfg.server) > 0 {
		var err error
		if srv, err = serverproc.Start(ctx, cfg.server, setupTimeout); err != nil {
			return "", err
		}
		defer srv.Stop()
		addr = srv.Addr()
	}

	if err := serverproc.CheckLoopback(addr); err != nil {
		return "", err
	}
	l, err := dialAll(ctx, addr, cfg.conns)
	if err != nil {
		return "", err
	}
	defer l.close()
	for i := range l.conns {
		l.wg.Add(1)
		go l.pingPong(i, cfg.size)
	}

	if err := l.sleep(ctx, cfg.warmup); err != nil {
		return "", err
	}
	n0, t0 := l.count(), time.Now()
	cpu0, err := srv.CPU()
	if err != nil {
		return "", err
	}
	if err := l.sleep(ctx, cfg.duration); err != nil {
		return "", err
	}
	n1, t1 := l.count(), time.Now()
	cpu1, err := srv.CPU()
	if err != nil {
		return "", err
	}
	msgs := n1 - n0
	if msgs <= 0 {
		return "", fmt.Errorf("no message came back in the %v window", cfg.duration)
	}
	line := fmt.Sprintf("E1 %s msgs_per_s=%d", cfg.impl, msgs*int64(time.Second)/int64(t1.Sub(t0)))
	if srv != nil {
		line += fmt.Sprintf(" server_cpu_us_per_msg=%.2f", float64((cpu1-cpu0).Microseconds())/float64(msgs))
	}
	return line, nil
}

// load is the set of connections and their ping-pong goroutines.
type load struct {
	conns    []net.Conn
	counts   []paddedCount
	stopping atomic.Bool
	wg       sync.WaitGroup
	failed   chan error // the first failure before stopping; buffered 1
}

// paddedCount is one connection's round-trip count, on its own cache line
// so the goroutines do not slow each other down counting.
type paddedCount struct {
	n atomic.Int64
	_ [56]byte
}

func dialAll(ctx context.Context, addr string, n int) (*load, error) {
	ctx, cancel := context.WithTimeout(ctx, setupTimeout)
	defer cancel()
	l := &load{counts: make([]paddedCount, n), failed: make(chan error, 1)}
	var d net.Dialer
	for range n {
		c, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			l.close()
			return nil, err
		}
		l.conns = append(l.conns, c)
	}
	return l, nil
}

// pingPong sends a message on connection i, reads it back, checks it and
// counts it, until the load stops. Each message starts with its sequence
// number, so a lost, repeated or reordered echo is caught.
func (l *load) pingPong(i, size int) {
	defer l.wg.Done()
	c := l.conns[i]
	msg := make([]byte, size)
	for j := range msg {
		msg[j] = byte(i + j)
	}
	reply := make([]byte, size)
	for seq := uint64(0); ; seq++ {
		binary.LittleEndian.PutUint64(msg, seq)
		_, err := c.Write(msg)
		if err == nil {
			_, err = io.ReadFull(c, reply)
		}
		if err == nil && !bytes.Equal(msg, reply) {
			err = fmt.Errorf("connection %d: message %d came back changed", i, seq)
		}
		if err != nil {
			if !l.stopping.Load() {
				select {
				case l.failed <- fmt.Errorf("connection %d: %w", i, err):
				default:
				}
			}
			return
		}
		l.counts[i].n.Add(1)
	}
}

// count returns the round trips completed so far over all connections.
func (l *load) count() int64 {
	var n int64
	for i := range l.counts {
		n += l.counts[i].n.Load()
	}
	return n
}

// sleep waits for d, returning early with an error if a connection fails or
// ctx ends.
func (l *load) sleep(ctx context.Context, d time.Duration) error {
	return loadgen.Sleep(ctx, d, l.failed)
}

// close stops the goroutines by closing their connections and waits for them.
func (l *load) close() {
	l.stopping.Store(true)
	for _, c := range l.conns {
		c.Close()
	}
	l.wg.Wait()
}
