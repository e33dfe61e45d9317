// Command e1load is the load generator of workload E1 (docs/benchmarks.md): it
// holds N TCP connections over loopback to an echo server and, on each,
// sends a message and waits for it to come back intact, over and over. It
// runs as a process of its own, apart from the server's.
//
// Usage:
//
//	e1load -impl NAME [-conns 50] [-size 1024] [-warmup 500ms] [-duration 3s] [-counts 1s] server-command [arg ...]
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
//	E1 NAME msgs_per_s=N server_cpu_us_per_msg=X ctxsw_per_msg=C [counts ...]
//
// msgs_per_s counts round trips (one message out and back) per second over
// all connections; server_cpu_us_per_msg is the server process's user plus
// system CPU time over the window divided by the round trips in it, and
// ctxsw_per_msg its context switches (voluntary and not, all its threads,
// from /proc/PID/task/*/status) divided by them (both omitted with -addr).
//
// Then, over a second window of -counts (0: none) under the same load, it
// counts per round trip the server's system calls (syscalls_per_msg) and
// those of each group of bench/internal/counts (read_per_msg,
// write_per_msg, epoll_pwait_per_msg, epoll_wait_per_msg, futex_per_msg,
// nanosleep_per_msg, poll_per_msg), with perf's syscall tracepoints or,
// when perf cannot, strace -c -f; and, from a server that reports them
// (bench/internal/serverstats), its heap allocations (allocs_per_msg). The
// counts are kept out of the timed window: perf counting adds a little to
// each system call, strace a great deal (perf itself starts before the
// warm-up with its counters off, and is switched on for the window). A line starting with "# E1 " follows
// the result line for each thing a reader of the figures should know: how
// the system calls were counted, or why they were not.
//
// Everything stops by itself: a run takes about warm-up plus duration plus
// counts, and at most a minute more before e1load gives up.
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
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/uvevent/uvevent/bench/internal/counts"
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
	counts   time.Duration
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
	flag.DurationVar(&cfg.counts, "counts", time.Second, "window of the system call and allocation counts, after the measuring window (0: none)")
	flag.Parse()
	cfg.server = flag.Args()
	if err := cfg.check(); err != nil {
		fmt.Fprintln(os.Stderr, "e1load:", err)
		flag.Usage()
		os.Exit(2)
	}
	loadgen.Main("e1load", cfg.warmup+cfg.duration+cfg.counts+setupTimeout+30*time.Second,
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
	case c.warmup < 0 || c.duration <= 0 || c.counts < 0:
		return errors.New("-warmup and -counts must not be negative and -duration must be positive")
	}
	return nil
}

// run starts the server if asked, loads it and returns the result line.
func run(ctx context.Context, cfg config) (string, error) {
	// Which tool counts system calls is found out while the server starts:
	// probing perf takes a few hundred milliseconds.
	tracer := make(chan counts.Tracer, 1)
	if cfg.counts > 0 && len(cfg.server) > 0 {
		go func() { tracer <- counts.Find() }()
	}
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
	l.impl = cfg.impl
	defer l.close()
	for i := range l.conns {
		l.wg.Add(1)
		go l.pingPong(i, cfg.size)
	}

	var trace *counts.Trace
	var tr counts.Tracer
	var notes []string
	if cfg.counts > 0 && srv != nil {
		tr = <-tracer
		notes = append(notes, tr.Source())
		var err error
		if trace, err = tr.Prepare(srv.Pid()); err != nil && tr.Tool != "" {
			notes = append(notes, fmt.Sprintf("%s: %s could not count: %v", cfg.impl, tr.Tool, err))
		}
	}
	if trace != nil {
		defer func() {
			if trace != nil {
				trace.Abandon()
			}
		}()
	}

	if err := l.sleep(ctx, cfg.warmup); err != nil {
		return "", err
	}
	n0, t0 := l.count(), time.Now()
	cpu0, sw0, err := serverUse(srv)
	if err != nil {
		return "", err
	}
	if err := l.sleep(ctx, cfg.duration); err != nil {
		return "", err
	}
	n1, t1 := l.count(), time.Now()
	cpu1, sw1, err := serverUse(srv)
	if err != nil {
		return "", err
	}
	msgs := n1 - n0
	if msgs <= 0 {
		return "", fmt.Errorf("no message came back in the %v window", cfg.duration)
	}
	line := fmt.Sprintf("E1 %s msgs_per_s=%d", cfg.impl, msgs*int64(time.Second)/int64(t1.Sub(t0)))
	if srv == nil {
		return line, nil
	}
	line += fmt.Sprintf(" server_cpu_us_per_msg=%.2f ctxsw_per_msg=%s",
		float64((cpu1-cpu0).Microseconds())/float64(msgs), perMsg(sw1-sw0, msgs))
	if cfg.counts == 0 {
		return line, nil
	}
	keys, more, err := countWindow(ctx, l, srv, cfg.counts, trace)
	trace = nil // stopped or abandoned by countWindow
	if err != nil {
		return "", err
	}
	line += keys
	for _, n := range append(notes, more...) {
		line += "\n# E1 " + n
	}
	return line, nil
}

// serverUse returns the CPU time and the context switches of the server so
// far.
func serverUse(srv *serverproc.Server) (time.Duration, int64, error) {
	if srv == nil {
		return 0, 0, nil
	}
	cpu, err := srv.CPU()
	if err != nil {
		return 0, 0, err
	}
	sw, err := counts.Switches(srv.Pid())
	if err != nil {
		return 0, 0, fmt.Errorf("server context switches: %w", err)
	}
	return cpu, sw, nil
}

// countWindow counts, over d of load, the server's system calls (with
// trace, prepared; nil when they cannot be counted) and heap allocations
// (when it reports them), and returns them per round trip as " key=value"
// fields, with notes on what could not be counted. A count that cannot be
// taken is left out and said in a note; a failing load is an error. It
// stops or abandons trace.
func countWindow(ctx context.Context, l *load, srv *serverproc.Server, d time.Duration, trace *counts.Trace) (string, []string, error) {
	var notes []string
	if trace != nil {
		if err := trace.Begin(); err != nil {
			notes = append(notes, fmt.Sprintf("%s: could not count system calls: %v", l.impl, err))
			trace.Abandon()
			trace = nil
		}
	}
	m0, stats, err := srv.Mallocs()
	n0 := l.count()
	if err == nil {
		err = l.sleep(ctx, d)
	}
	n1 := l.count()
	var m1 int64
	if err == nil {
		m1, _, err = srv.Mallocs()
	}
	if err != nil {
		if trace != nil {
			trace.Abandon()
		}
		return "", nil, err
	}
	msgs := n1 - n0
	var keys string
	if trace != nil {
		calls, err := trace.Stop()
		if err != nil {
			notes = append(notes, fmt.Sprintf("%s: could not count system calls: %v", l.impl, err))
		} else if msgs > 0 {
			keys = callKeys(calls, msgs)
		}
	}
	if msgs <= 0 {
		return "", nil, fmt.Errorf("no message came back in the %v window of the counts", d)
	}
	if stats {
		keys += " allocs_per_msg=" + perMsg(m1-m0, msgs)
	}
	return keys, notes, nil
}

// callKeys formats calls per message as " syscalls_per_msg=X" then one
// " KEY_per_msg=X" per group of counts.Groups, in their order.
func callKeys(calls counts.Calls, msgs int64) string {
	s := " syscalls_per_msg=" + perMsg(calls.Total, msgs)
	for _, g := range counts.Groups {
		s += " " + g.Key + "_per_msg=" + perMsg(calls.Group[g.Key], msgs)
	}
	return s
}

// perMsg formats n per message with four decimals: counts per message run
// from 0.001 (a nap now and then) to a few.
func perMsg(n, msgs int64) string {
	return strconv.FormatFloat(float64(n)/float64(msgs), 'f', 4, 64)
}

// load is the set of connections and their ping-pong goroutines.
type load struct {
	impl     string
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
