// Command u1 is uvevent's side of workload U1 (docs/benchmarks.md): a
// started uv.UDP on loopback counts, in its callback, the datagrams of an
// unpaced burst of -n datagrams, and prints
//
//	U1 uvevent dgrams_per_s=N share=F      (or uvevent-go with -driver go)
//
// as bench/c/u1_udp.c does for raw libuv. The UDP reads in batches
// (recvmmsg) on both drivers. With -readfrom a goroutine counts instead,
// receiving with ReadFrom into a 64 KiB buffer as u1net's goroutine does
// with net's ReadFromUDP (the line says uvevent-readfrom, or
// uvevent-go-readfrom). The burst comes from U1's common sender, the
// process -sender (bench/c/u1_send.c built), which u1 starts once the UDP
// receives (bench/internal/udpburst), as every U1 receiver does: the
// process holds the receiver alone.
//
// Usage: u1 -sender PATH [-driver go] [-readfrom] [-n 1000000] [-size 64] [-delay 0]
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"

	"github.com/uvevent/uvevent/bench/internal/driverflag"
	"github.com/uvevent/uvevent/bench/internal/udpburst"
	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

func main() {
	f := udpburst.Var()
	driver := driverflag.Var()
	readFrom := flag.Bool("readfrom", false, "count in a goroutine receiving with ReadFrom, not in a callback")
	flag.Parse()
	if err := run(f, *driver, *readFrom); err != nil {
		fmt.Fprintln(os.Stderr, "u1:", err)
		os.Exit(1)
	}
}

func run(f *udpburst.Flags, driver reactor.Driver, readFrom bool) error {
	if err := f.Check(); err != nil {
		return err
	}
	r, err := reactor.New(reactor.Options{Driver: driver})
	if err != nil {
		return err
	}
	defer r.Close()
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- r.Serve(ctx) }()
	defer func() {
		stop()
		<-served
	}()

	u, err := uv.ListenUDP(r, "udp4", "127.0.0.1:0")
	if err != nil {
		return err
	}
	var c udpburst.Counter
	impl := driverflag.Impl(driver)
	done := make(chan struct{})
	if readFrom {
		impl += "-readfrom"
		go func() {
			defer close(done)
			buf := make([]byte, 64<<10)
			for {
				if _, _, err := u.ReadFrom(buf); err != nil {
					return // closed
				}
				c.Got()
			}
		}()
	} else {
		close(done)
		event.Subscribe(u, func(_ event.Event, res any, _ error) {
			if _, ok := res.(*uv.Datagram); ok {
				c.Got()
			}
		})
		if err := u.Start(); err != nil {
			return err
		}
	}
	err = udpburst.Burst(f, u.LocalAddr().(*net.UDPAddr), &c)
	u.Close()
	<-done
	if err != nil {
		return err
	}
	udpburst.Print(impl, f, &c)
	return nil
}
