// Command m2load measures workload M2: the memory an echo server holds for
// each idle connection. It starts the server (bench/cmd/e1load's contract,
// bench/internal/serverproc), reads its resident set size, opens -conns
// connections to it and makes one 1-byte round trip on each (so the server
// has accepted every one and waits to read again), lets it settle, and reads
// the resident set size again.
//
// Usage:
//
//	m2load -impl NAME [-conns 10000] [-settle 500ms] server-command [arg ...]
//
// It prints one result line:
//
//	M2 NAME conns=N rss_bytes_per_conn=X idle_cpu_us_per_s=Y
//
// rss_bytes_per_conn is the growth of the server's VmRSS (from
// /proc/PID/status) over the connections, divided by their number;
// idle_cpu_us_per_s is the server's CPU time per second of the settling
// window, the connections open and silent. The connections take one file
// descriptor each on both sides: m2load raises its own RLIMIT_NOFILE to its
// hard limit and refuses a count that does not fit (Go servers raise theirs
// at start the same way).
package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"syscall"
	"time"

	"github.com/uvevent/uvevent/bench/internal/loadgen"
	"github.com/uvevent/uvevent/bench/internal/serverproc"
)

const setupTimeout = 30 * time.Second

func main() {
	impl := flag.String("impl", "", "implementation name printed in the result line (required)")
	conns := flag.Int("conns", 10000, "idle connections")
	settle := flag.Duration("settle", 500*time.Millisecond, "wait between the last round trip and the second reading")
	flag.Parse()
	if *impl == "" || flag.NArg() == 0 || *conns <= 0 || *settle < 0 {
		fmt.Fprintln(os.Stderr, "m2load: want -impl, a server command, positive -conns")
		flag.Usage()
		os.Exit(2)
	}
	if err := raiseNoFile(uint64(*conns) + 64); err != nil {
		fmt.Fprintln(os.Stderr, "m2load:", err)
		os.Exit(1)
	}
	loadgen.Main("m2load", 2*setupTimeout+*settle, func(ctx context.Context) (string, error) {
		return run(ctx, *impl, flag.Args(), *conns, *settle)
	})
}

// raiseNoFile raises the soft RLIMIT_NOFILE to the hard limit, and fails if
// that is below need.
func raiseNoFile(need uint64) error {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return err
	}
	if uint64(rl.Max) < need {
		return fmt.Errorf("RLIMIT_NOFILE hard limit %d is below the %d descriptors needed", rl.Max, need)
	}
	if rl.Cur < rl.Max {
		rl.Cur = rl.Max
		return syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl)
	}
	return nil
}

func run(ctx context.Context, impl string, argv []string, n int, settle time.Duration) (string, error) {
	srv, err := serverproc.Start(ctx, argv, setupTimeout)
	if err != nil {
		return "", err
	}
	defer srv.Stop()
	if err := serverproc.CheckLoopback(srv.Addr()); err != nil {
		return "", err
	}
	time.Sleep(settle) // the server's start-up settles too
	rss0, err := vmRSS(srv.Pid())
	if err != nil {
		return "", err
	}
	cs := make([]net.Conn, 0, n)
	defer func() {
		for _, c := range cs {
			c.Close()
		}
	}()
	var d net.Dialer
	buf := []byte{0}
	for i := range n {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		c, err := d.DialContext(ctx, "tcp", srv.Addr())
		if err != nil {
			return "", fmt.Errorf("connection %d: %w", i, err)
		}
		cs = append(cs, c)
		buf[0] = byte(i)
		if _, err = c.Write(buf); err == nil {
			_, err = io.ReadFull(c, buf)
		}
		if err == nil && buf[0] != byte(i) {
			err = fmt.Errorf("echo %d, want %d", buf[0], byte(i))
		}
		if err != nil {
			return "", fmt.Errorf("connection %d: %w", i, err)
		}
	}
	cpu0, err := srv.CPU()
	if err != nil {
		return "", err
	}
	t0 := time.Now()
	time.Sleep(settle)
	cpu1, err := srv.CPU()
	if err != nil {
		return "", err
	}
	idle := time.Since(t0)
	rss1, err := vmRSS(srv.Pid())
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("M2 %s conns=%d rss_bytes_per_conn=%d idle_cpu_us_per_s=%d", impl, n,
		(rss1-rss0)/int64(n), int64(float64((cpu1-cpu0).Microseconds())/idle.Seconds())), nil
}

// vmRSS returns the resident set size of process pid, in bytes.
func vmRSS(pid int) (int64, error) {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := bytes.CutPrefix(sc.Bytes(), []byte("VmRSS:")); ok {
			kib, err := strconv.ParseInt(string(bytes.TrimSuffix(bytes.TrimSpace(v), []byte(" kB"))), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("/proc/%d/status: VmRSS %q: %v", pid, v, err)
			}
			return kib << 10, nil
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("/proc/%d/status: no VmRSS line", pid)
}
