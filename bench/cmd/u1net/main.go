// Command u1net is workload U1's net.UDPConn comparator (docs/benchmarks.md):
// a goroutine reading a net.UDPConn on loopback with ReadFromUDP counts the
// datagrams of an unpaced burst of -n datagrams, and prints
//
//	U1 net dgrams_per_s=N share=F
//
// The burst comes from U1's common sender, the process -sender
// (bench/c/u1_send.c built), started once the goroutine reads
// (bench/internal/udpburst), as every U1 receiver starts it.
//
// Usage: u1net -sender PATH [-n 1000000] [-size 64] [-delay 0]
package main

import (
	"flag"
	"fmt"
	"net"
	"os"

	"github.com/uvevent/uvevent/bench/internal/udpburst"
)

func main() {
	f := udpburst.Var()
	flag.Parse()
	if err := run(f); err != nil {
		fmt.Fprintln(os.Stderr, "u1net:", err)
		os.Exit(1)
	}
}

func run(f *udpburst.Flags) error {
	if err := f.Check(); err != nil {
		return err
	}
	conn, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return err
	}
	var c udpburst.Counter
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 64<<10)
		for {
			if _, _, err := conn.ReadFromUDP(buf); err != nil {
				return // closed
			}
			c.Got()
		}
	}()
	err = udpburst.Burst(f, conn.LocalAddr().(*net.UDPAddr), &c)
	conn.Close()
	<-done
	if err != nil {
		return err
	}
	udpburst.Print("net", f, &c)
	return nil
}
