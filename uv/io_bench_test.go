package uv_test

import (
	"context"
	"testing"

	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// BenchmarkIOPingPong: one byte sent back and forth between the two ends
// of a socket pair, each answering from its OnRead callback, the loop run
// by Run in the benchmark's goroutine: the cost of one read delivered to a
// callback and one Send, per driver, with nothing else on the loop.
func BenchmarkIOPingPong(b *testing.B) {
	for _, d := range conform.Drivers {
		b.Run(d.String(), func(b *testing.B) {
			if r, err := reactor.New(reactor.Options{Driver: d}); err != nil {
				b.Skipf("the %s driver is not in this build: %v", d, err)
			} else {
				r.Close()
			}
			u := uv.UvtNewReactorOn(b, d)
			a, z, err := uv.Pipe(u.Reactor)
			if err != nil {
				b.Fatal(err)
			}
			one := []byte{1}
			z.OnRead(func(p []byte, err error) {
				if err == nil {
					z.Send(p)
				}
			})
			n := 0
			a.OnRead(func(p []byte, err error) {
				if n += len(p); err != nil || n >= b.N {
					a.Close()
					z.Close()
					return
				}
				a.Send(one)
			})
			if err := a.Start(); err != nil {
				b.Fatal(err)
			}
			if err := z.Start(); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			if err := a.Send(one); err != nil {
				b.Fatal(err)
			}
			if err := u.Run(context.Background()); err != nil {
				b.Fatal(err)
			}
		})
	}
}
