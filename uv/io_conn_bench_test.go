package uv_test

import (
	"context"
	"testing"

	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// BenchmarkIOConnPingPong: one byte written and read back through the
// net.Conn calls of one end of a connection, from the benchmark's
// goroutine, the other end echoing from its OnRead callback on a reactor
// served by another goroutine: the cost of one blocking Write and one
// blocking Read, per driver (E1 through the net.Conn adapter). Over a
// socket pair (uv.Pipe), whose Reads go through the loop, and over TCP
// loopback, whose Reads take the read lane (io_readlane.go).
func BenchmarkIOConnPingPong(b *testing.B) {
	for _, d := range conform.Drivers {
		for _, transport := range []string{"pipe", "tcp"} {
			b.Run(d.String()+"/"+transport, func(b *testing.B) { benchConnPingPong(b, d, transport) })
		}
	}
}

func benchConnPingPong(b *testing.B, d reactor.Driver, transport string) {
	if !conform.Available(d) {
		b.Skipf("the %s driver is not in this build (no cgo)", d)
	}
	u := uv.UvtNewReactorOn(b, d)
	stop := uv.UvtServe(b, u)
	defer stop()
	echo := func(z *uv.IO) error {
		z.OnRead(func(p []byte, err error) {
			if err == nil {
				z.Send(p)
			}
		})
		return z.Start()
	}
	var a, z *uv.IO
	var err error
	switch transport {
	case "pipe":
		uv.UvtMust(b, u.Reactor.Call(func() {
			if a, z, err = uv.Pipe(u.Reactor); err == nil {
				err = echo(z)
			}
		}))
	default:
		var ln *uv.Listener
		ln, err = uv.Listen(u.Reactor, "tcp4", "127.0.0.1:0")
		uv.UvtMust(b, err)
		defer ln.Close()
		ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
		defer cancel()
		a, err = uv.Dial(ctx, u.Reactor, "tcp4", ln.Addr().String())
		uv.UvtMust(b, err)
		z, err = ln.AcceptIO(ctx)
		uv.UvtMust(b, err)
		uv.UvtMust(b, u.Reactor.Call(func() { err = echo(z) }))
	}
	uv.UvtMust(b, err)
	defer a.Close()
	defer z.Close()
	one, got := []byte{1}, make([]byte, 1)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := a.Write(one); err != nil {
			b.Fatal(err)
		}
		if _, err := a.Read(got); err != nil {
			b.Fatal(err)
		}
	}
}
