package uv_test

import (
	"context"
	"net"
	"testing"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/uv"
)

// BenchmarkUDPEcho: a datagram to a started UDP that echoes it from its
// callback, read back with ReadFrom, on each driver; package net's
// goroutine-blocking sockets for reference.
func BenchmarkUDPEcho(b *testing.B) {
	for _, d := range conform.Drivers {
		b.Run(d.String(), func(b *testing.B) {
			r := uv.UvtNewReactorOn(b, d).Reactor
			defer r.Close()
			ctx, stop := context.WithCancel(context.Background())
			served := make(chan error, 1)
			go func() { served <- r.Serve(ctx) }()
			defer func() { stop(); <-served }()
			client, err := uv.ListenUDP(r, "udp4", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			server, err := uv.ListenUDP(r, "udp4", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			defer client.Close()
			defer server.Close()
			event.Subscribe(server, func(ev event.Event, res any, _ error) {
				if dg, ok := res.(*uv.Datagram); ok {
					uv.UDPOf(ev).WriteTo(dg.Data, dg.Addr)
				}
			})
			if err := server.Start(); err != nil {
				b.Fatal(err)
			}
			echo(b, client, server.LocalAddr())
		})
	}
	b.Run("net", func(b *testing.B) {
		client, err := net.ListenPacket("udp4", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		server, err := net.ListenPacket("udp4", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		defer client.Close()
		defer server.Close()
		go func() {
			buf := make([]byte, 2048)
			for {
				n, from, err := server.ReadFrom(buf)
				if err != nil {
					return
				}
				server.WriteTo(buf[:n], from)
			}
		}()
		echo(b, client, server.LocalAddr())
	})
}

// echo sends b.N datagrams of 64 bytes to to, each read back before the
// next.
func echo(b *testing.B, c net.PacketConn, to net.Addr) {
	msg, buf := make([]byte, 64), make([]byte, 2048)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := c.WriteTo(msg, to); err != nil {
			b.Fatal(err)
		}
		if _, _, err := c.ReadFrom(buf); err != nil {
			b.Fatal(err)
		}
	}
}
