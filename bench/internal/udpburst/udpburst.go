// Package udpburst is what workload U1's programs share (bench/cmd/u1,
// bench/cmd/u1net; bench/c/u1_udp.c does the same in C): the unpaced
// sender, the count of what arrived, the end of receiving and the figures.
package udpburst

import (
	"flag"
	"fmt"
	"net"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// Flags are U1's flags: -n datagrams of -size bytes.
type Flags struct{ N, Size int }

// Var registers U1's flags.
func Var() *Flags {
	f := &Flags{}
	flag.IntVar(&f.N, "n", 1000000, "datagrams sent")
	flag.IntVar(&f.Size, "size", 64, "bytes per datagram (1..1400)")
	return f
}

// Check refuses flags out of range.
func (f *Flags) Check() error {
	if f.N <= 0 || f.Size <= 0 || f.Size > 1400 {
		return fmt.Errorf("-n must be positive, -size in 1..1400")
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

// Send writes f.N datagrams of f.Size bytes to to as fast as sendto(2)
// goes, from a socket of its own (one system call per datagram, as the C
// comparator's sender), then waits until a 100 ms check finds nothing new
// arrived at c.
func Send(f *Flags, to *net.UDPAddr, c *Counter) error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	sa := &unix.SockaddrInet4{Port: to.Port}
	copy(sa.Addr[:], to.IP.To4())
	p := make([]byte, f.Size)
	for i := 0; i < f.N; {
		switch err := unix.Sendto(fd, p, 0, sa); err {
		case nil:
			i++
		case unix.ENOBUFS, unix.EINTR:
		default:
			return err
		}
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
