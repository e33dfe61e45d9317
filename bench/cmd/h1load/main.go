// Command h1load is the load generator of workload H1: HTTP/1.1 GET
// requests from N connections at once to a server it starts, keeping the
// connections alive or opening one per request, bounded in requests and in
// time.
//
// Usage:
//
//	h1load -impl NAME [-conns 100] [-requests 100000] [-duration 5s] [-warmup 300ms] [-close] server-command [arg ...]
//
// The server follows bench/cmd/e1load's contract (bench/internal/serverproc).
// Each of -conns workers sends a request, reads the whole response (status
// 200 and a body of Content-Length bytes), and sends the next, on the same
// connection, or with -close on a new connection each time ("Connection:
// close": the server closes first). After the warm-up, the measured part
// stops when -requests requests have completed or -duration has passed,
// whichever comes first. It prints one result line:
//
//	H1 NAME reqs_per_s=N p50_us=X p99_us=Y server_cpu_us_per_req=Z
//
// (workload H1C with -close). Latency is from writing a request to having
// read its response's last byte.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/uvevent/uvevent/bench/internal/loadgen"
	"github.com/uvevent/uvevent/bench/internal/serverproc"
)

type config struct {
	impl      string
	server    []string
	conns     int
	requests  int64
	duration  time.Duration
	warmup    time.Duration
	closeEach bool
}

const setupTimeout = 30 * time.Second

func main() {
	var cfg config
	flag.StringVar(&cfg.impl, "impl", "", "implementation name printed in the result line (required)")
	flag.IntVar(&cfg.conns, "conns", 100, "concurrent connections (workers)")
	flag.Int64Var(&cfg.requests, "requests", 100000, "requests measured, at most")
	flag.DurationVar(&cfg.duration, "duration", 5*time.Second, "measuring window, at most")
	flag.DurationVar(&cfg.warmup, "warmup", 300*time.Millisecond, "load before measuring starts")
	flag.BoolVar(&cfg.closeEach, "close", false, "one connection per request (no keep-alive)")
	flag.Parse()
	cfg.server = flag.Args()
	if cfg.impl == "" || len(cfg.server) == 0 || cfg.conns <= 0 || cfg.requests <= 0 || cfg.duration <= 0 || cfg.warmup < 0 {
		fmt.Fprintln(os.Stderr, "h1load: want -impl, a server command, and positive -conns, -requests, -duration")
		flag.Usage()
		os.Exit(2)
	}
	loadgen.Main("h1load", cfg.warmup+cfg.duration+setupTimeout+30*time.Second,
		func(ctx context.Context) (string, error) { return run(ctx, cfg) })
}

func run(ctx context.Context, cfg config) (string, error) {
	srv, err := serverproc.Start(ctx, cfg.server, setupTimeout)
	if err != nil {
		return "", err
	}
	defer srv.Stop()
	if err := serverproc.CheckLoopback(srv.Addr()); err != nil {
		return "", err
	}
	l := &load{addr: srv.Addr(), closeEach: cfg.closeEach, failed: make(chan error, 1),
		lat: make([][]time.Duration, cfg.conns)}
	l.req = []byte("GET / HTTP/1.1\r\nHost: " + srv.Addr() + "\r\n\r\n")
	if cfg.closeEach {
		l.req = []byte("GET / HTTP/1.1\r\nHost: " + srv.Addr() + "\r\nConnection: close\r\n\r\n")
	}
	var wg sync.WaitGroup
	defer func() {
		l.stop.Store(true)
		wg.Wait()
	}()
	for i := range cfg.conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l.work(i)
		}()
	}
	if err := l.sleep(ctx, cfg.warmup); err != nil {
		return "", err
	}
	cpu0, err := srv.CPU()
	if err != nil {
		return "", err
	}
	t0 := time.Now()
	l.total = cfg.requests
	l.limit.Store(cfg.requests)
	l.measuring.Store(true)
	deadline := time.NewTimer(cfg.duration)
	defer deadline.Stop()
	select {
	case <-l.done():
	case <-deadline.C:
	case err := <-l.failed:
		return "", err
	case <-ctx.Done():
		return "", ctx.Err()
	}
	l.measuring.Store(false)
	elapsed := time.Since(t0)
	n := l.completed.Load()
	cpu1, err := srv.CPU()
	if err != nil {
		return "", err
	}
	l.stop.Store(true)
	wg.Wait()
	var all []time.Duration
	for _, s := range l.lat {
		all = append(all, s...)
	}
	if n == 0 {
		return "", fmt.Errorf("no request completed in %v", cfg.duration)
	}
	slices.Sort(all)
	workload := "H1"
	if cfg.closeEach {
		workload = "H1C"
	}
	return fmt.Sprintf("%s %s reqs_per_s=%d p50_us=%d p99_us=%d server_cpu_us_per_req=%.2f",
		workload, cfg.impl, int64(float64(n)/elapsed.Seconds()),
		all[len(all)/2].Microseconds(), all[len(all)*99/100].Microseconds(),
		float64((cpu1-cpu0).Microseconds())/float64(n)), nil
}

// load is the workers' shared state.
type load struct {
	addr      string
	req       []byte
	closeEach bool

	measuring atomic.Bool  // requests starting now are measured
	total     int64        // requests to measure
	limit     atomic.Int64 // measured requests left to start
	completed atomic.Int64 // measured requests completed
	stop      atomic.Bool
	finished  chan struct{} // closed once limit reaches 0
	once      sync.Once
	failed    chan error // the first failure; buffered 1
	lat       [][]time.Duration
}

func (l *load) done() <-chan struct{} {
	l.once.Do(func() { l.finished = make(chan struct{}) })
	return l.finished
}

// work is worker i: requests one after the other until the load stops or
// the measured requests are all taken.
func (l *load) work(i int) {
	l.done()
	var c net.Conn
	var br *bufio.Reader
	defer func() {
		if c != nil {
			c.Close()
		}
	}()
	for !l.stop.Load() {
		measured := l.measuring.Load()
		if measured && l.limit.Add(-1) < 0 {
			return
		}
		if c == nil {
			var err error
			if c, err = net.Dial("tcp", l.addr); err != nil {
				l.fail(err)
				return
			}
			br = bufio.NewReader(c)
		}
		t := time.Now()
		err := l.roundTrip(c, br)
		d := time.Since(t)
		if err != nil {
			l.fail(fmt.Errorf("worker %d: %w", i, err))
			return
		}
		if measured {
			l.lat[i] = append(l.lat[i], d)
			if l.completed.Add(1) == l.total {
				close(l.finished)
			}
		}
		if l.closeEach {
			c.Close()
			c = nil
		}
	}
}

// roundTrip writes the request and reads the response whole; with -close,
// up to the server's end of the connection.
func (l *load) roundTrip(c net.Conn, br *bufio.Reader) error {
	if _, err := c.Write(l.req); err != nil {
		return err
	}
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("status %s", resp.Status)
	}
	if err == nil && l.closeEach {
		if _, rerr := br.ReadByte(); !errors.Is(rerr, io.EOF) {
			err = fmt.Errorf("server did not close after the response: %v", rerr)
		}
	}
	return err
}

func (l *load) fail(err error) {
	if l.stop.Load() {
		return
	}
	select {
	case l.failed <- err:
	default:
	}
}

// sleep waits for d, returning early with an error if a worker fails or ctx
// ends.
func (l *load) sleep(ctx context.Context, d time.Duration) error {
	return loadgen.Sleep(ctx, d, l.failed)
}
