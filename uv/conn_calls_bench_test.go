package uv_test

import (
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// The net.Conn calls net/http's server makes per keep-alive request, on an
// accepted connection of uv.Listener (per driver) beside the same calls on
// a *net.TCPConn of net.Listen: what serving H1 over uv.Listener costs in
// the connection's own calls.

// benchConnPair returns the two ends of a TCP loopback connection: the
// server's, accepted (as net/http accepts it) from uv.Listener on driver
// d, or from net.Listen when impl is "net", and the client's, a
// *net.TCPConn.
func benchConnPair(b *testing.B, impl string) (srv, cli net.Conn) {
	b.Helper()
	var ln net.Listener
	var err error
	if impl == "net" {
		ln, err = net.Listen("tcp4", "127.0.0.1:0")
	} else {
		var d reactor.Driver
		for _, x := range conform.Drivers {
			if x.String() == impl {
				d = x
			}
		}
		if !conform.Available(d) {
			b.Skipf("the %s driver is not in this build (no cgo)", d)
		}
		u := uv.UvtNewReactorOn(b, d)
		b.Cleanup(uv.UvtServe(b, u))
		ln, err = uv.Listen(u.Reactor, "tcp4", "127.0.0.1:0")
	}
	uv.UvtMust(b, err)
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			b.Error(err)
		}
		accepted <- c
	}()
	cli, err = net.Dial("tcp4", ln.Addr().String())
	uv.UvtMust(b, err)
	srv = <-accepted
	if srv == nil {
		b.FailNow()
	}
	b.Cleanup(func() {
		cli.Close()
		srv.Close()
	})
	return srv, cli
}

// benchImpls are the servers' sides compared: package net's, then each
// driver's.
func benchImpls() []string {
	impls := []string{"net"}
	for _, d := range conform.Drivers {
		impls = append(impls, d.String())
	}
	return impls
}

// BenchmarkConnCalls: the cost of each net.Conn call net/http's server
// makes per keep-alive request, with nothing else going on, per
// implementation.
func BenchmarkConnCalls(b *testing.B) {
	longAgo := time.Unix(1, 0)
	calls := []struct {
		name string
		fn   func(b *testing.B, c net.Conn)
	}{
		// net/http removes a read deadline none set several times per
		// request.
		{"SetReadDeadlineZero", func(b *testing.B, c net.Conn) {
			for range b.N {
				c.SetReadDeadline(time.Time{})
			}
		}},
		{"SetWriteDeadlineZero", func(b *testing.B, c net.Conn) {
			for range b.N {
				c.SetWriteDeadline(time.Time{})
			}
		}},
		// abortPendingRead with no Read waiting.
		{"SetReadDeadlinePastThenZero", func(b *testing.B, c net.Conn) {
			for range b.N {
				c.SetReadDeadline(longAgo)
				c.SetReadDeadline(time.Time{})
			}
		}},
		{"RemoteAddr", func(b *testing.B, c net.Conn) {
			for range b.N {
				c.RemoteAddr()
			}
		}},
		// What a Read past its deadline returns (net/http's background
		// Read, aborted).
		{"ReadTimedOut", func(b *testing.B, c net.Conn) {
			c.SetReadDeadline(longAgo)
			p := make([]byte, 1)
			for range b.N {
				if _, err := c.Read(p); err == nil {
					b.Fatal("a Read past its deadline read")
				}
			}
		}},
	}
	for _, call := range calls {
		for _, impl := range benchImpls() {
			b.Run(call.name+"/"+impl, func(b *testing.B) {
				srv, _ := benchConnPair(b, impl)
				b.ReportAllocs()
				b.ResetTimer()
				call.fn(b, srv)
			})
		}
	}
	// A Read of 64 bytes that are there (the client keeps the socket
	// full, in large writes), and a Write of 64 bytes the socket takes
	// (the client drains it, in large reads).
	for _, impl := range benchImpls() {
		b.Run("Read64/"+impl, func(b *testing.B) {
			srv, cli := benchConnPair(b, impl)
			go func() {
				p := make([]byte, 1<<16)
				for {
					if _, err := cli.Write(p); err != nil {
						return
					}
				}
			}()
			p := make([]byte, 64)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if _, err := io.ReadFull(srv, p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	for _, impl := range benchImpls() {
		b.Run("Write64/"+impl, func(b *testing.B) {
			srv, cli := benchConnPair(b, impl)
			go io.Copy(io.Discard, cli)
			p := make([]byte, 64)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if _, err := srv.Write(p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkConnKeepAlive: one keep-alive request as net/http's server
// makes its calls on the connection, the client a *net.TCPConn on another
// goroutine: the request's Read, the background Read started on its own
// goroutine, the response's Write, the background Read aborted (the read
// deadline set in the past, then removed) and the deadlines removed, per
// implementation. The client's side is the same in each.
func BenchmarkConnKeepAlive(b *testing.B) {
	for _, impl := range benchImpls() {
		b.Run(impl, func(b *testing.B) {
			srv, cli := benchConnPair(b, impl)
			req, resp := make([]byte, 64), make([]byte, 128)
			go func() {
				p := make([]byte, len(resp))
				for {
					if _, err := cli.Write(req); err != nil {
						return
					}
					if _, err := io.ReadFull(cli, p); err != nil {
						return
					}
				}
			}()
			p, one := make([]byte, 4096), make([]byte, 1)
			bgRead := make(chan int, 1)
			longAgo := time.Unix(1, 0)
			early := 0 // the request's first byte, when the background Read took it
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := processCPU(b)
			for range b.N {
				srv.SetReadDeadline(time.Time{})
				for got := early; got < len(req); {
					n, err := srv.Read(p)
					if err != nil {
						b.Fatal(err)
					}
					got += n
				}
				srv.SetReadDeadline(time.Time{}) // startBackgroundRead
				go func() {
					n, _ := srv.Read(one)
					bgRead <- n
				}()
				if _, err := srv.Write(resp); err != nil {
					b.Fatal(err)
				}
				srv.SetReadDeadline(longAgo) // abortPendingRead
				early = <-bgRead             // 1 when the next request came first
				srv.SetReadDeadline(time.Time{})
				srv.SetWriteDeadline(time.Time{})
				srv.SetReadDeadline(time.Time{})
			}
			b.StopTimer()
			b.ReportMetric(float64(processCPU(b)-cpu0)/float64(b.N), "cpu-ns/op")
			srv.Close()
		})
	}
}

// processCPU is the CPU time the process has used (both ends, every
// goroutine), in nanoseconds.
func processCPU(b *testing.B) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
