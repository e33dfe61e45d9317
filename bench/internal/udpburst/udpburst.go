// Package udpburst is what workload U1's Go receivers share (bench/cmd/u1,
// bench/cmd/u1net; bench/c/u1_udp.c does the same in C): running the
// common sender, the count of what arrived, the end of receiving and the
// figures.
//
// The sender is bench/c/u1_send.c, a process of its own that every U1
// receiver, raw C's too, starts once it receives, so that the same code in
// the same kind of process sends to each and the receivers are the only
// difference between the programs' figures. An in-process sender made the
// figure compare senders as well: a C thread calling sendto for raw C, a
// goroutine paying the Go runtime's system-call entry and exit and its
// scheduling for ours and net's, sharing the receiver's process and, on
// Go's side, its OS threads (so that neither side's CPU could be counted
// apart).
package udpburst

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync/atomic"
	"time"
)

// Flags are U1's flags: the sender program, -n datagrams of -size bytes,
// and how long to wait before the burst.
type Flags struct {
	N, Size int
	Sender  string
	Delay   time.Duration
}

// Var registers U1's flags.
func Var() *Flags {
	f := &Flags{}
	flag.IntVar(&f.N, "n", 1000000, "datagrams sent")
	flag.IntVar(&f.Size, "size", 64, "bytes per datagram (1..1400)")
	flag.StringVar(&f.Sender, "sender", "", "the sender program, bench/c/u1_send.c built (required)")
	flag.DurationVar(&f.Delay, "delay", 0, "wait this long, receiving, before starting the sender (time to attach perf stat -p)")
	return f
}

// ErrNoSender is Check's error when -sender is not given.
var ErrNoSender = errors.New("-sender is required: the path of bench/c/u1_send.c built")

// Check refuses flags out of range.
func (f *Flags) Check() error {
	if f.N <= 0 || f.Size <= 0 || f.Size > 1400 || f.Delay < 0 {
		return fmt.Errorf("-n must be positive, -size in 1..1400, -delay not negative")
	}
	if f.Sender == "" {
		return ErrNoSender
	}
	return nil
}

// Counter counts the datagrams received and times the first and the last;
// Got is called by the receiver for each.
type Counter struct {
	n           atomic.Int64
	first, last atomic.Int64 // UnixNano
}

// Got counts one datagram.
func (c *Counter) Got() {
	now := time.Now().UnixNano()
	if c.n.Add(1) == 1 {
		c.first.Store(now)
	}
	c.last.Store(now)
}

// Burst is called once the receiver at to receives into c. After f.Delay
// it runs f.Sender to send f.N datagrams of f.Size bytes to to's port on
// 127.0.0.1, waits for the sender to exit, then until a 100 ms check finds
// nothing new arrived at c: u1_udp.c ends its receiving the same way.
func Burst(f *Flags, to *net.UDPAddr, c *Counter) error {
	time.Sleep(f.Delay)
	cmd := exec.Command(f.Sender, strconv.Itoa(to.Port), strconv.Itoa(f.N), strconv.Itoa(f.Size))
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("sender %s: %w", f.Sender, err)
	}
	for seen := int64(-1); ; {
		time.Sleep(100 * time.Millisecond)
		n := c.n.Load()
		if n == seen {
			return nil
		}
		seen = n
	}
}

// Print writes U1's line for impl: the datagrams received per second from
// the first to the last, and the share of those sent that arrived.
func Print(impl string, f *Flags, c *Counter) {
	n := c.n.Load()
	rate := 0.0
	if d := c.last.Load() - c.first.Load(); d > 0 {
		rate = float64(n) / (float64(d) / 1e9)
	}
	fmt.Printf("U1 %s dgrams_per_s=%.0f share=%.3f\n", impl, rate, float64(n)/float64(f.N))
}
