package uv_test

import (
	"testing"

	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// BenchmarkIOConnPingPong: one byte written and read back through the
// net.Conn calls of one end of a socket pair, from the benchmark's
// goroutine, the other end echoing from its OnRead callback on a reactor
// served by another goroutine: the cost of one blocking Write and one
// blocking Read, per driver (E1 through the net.Conn adapter).
func BenchmarkIOConnPingPong(b *testing.B) {
	for _, d := range conform.Drivers {
		b.Run(d.String(), func(b *testing.B) { benchConnPingPong(b, d) })
	}
}

func benchConnPingPong(b *testing.B, d reactor.Driver) {
	if !conform.Available(d) {
		b.Skipf("the %s driver is not in this build (no cgo)", d)
	}
	{
		u := uv.UvtNewReactorOn(b, d)
		stop := uv.UvtServe(b, u)
		defer stop()
		var a, z *uv.IO
		var err error
		uv.UvtMust(b, u.Reactor.Call(func() {
			if a, z, err = uv.Pipe(u.Reactor); err != nil {
				return
			}
			z.OnRead(func(p []byte, err error) {
				if err == nil {
					z.Send(p)
				}
			})
			err = z.Start()
		}))
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
}
