package loop_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/uvevent/uvevent/loop"
	"github.com/uvevent/uvevent/reactor"
)

// benchLoop makes a loop on driver d for a benchmark, or skips saying why.
func benchLoop(b *testing.B, d reactor.Driver) *loop.Loop {
	l, err := loop.New(loop.Options{ReactorOptions: reactor.Options{Driver: d}})
	if errors.Is(err, reactor.ErrNoLibuv) {
		b.Skipf("the %v driver is not in this build (built without cgo)", d)
	}
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { l.Close() })
	return l
}

// BenchmarkPingPong: 1 KiB ping-pong through two Streams over a socket
// pair, one round trip per op, on each driver.
func BenchmarkPingPong(b *testing.B) {
	for _, d := range drivers {
		b.Run(d.String(), func(b *testing.B) {
			l := benchLoop(b, d)
			fds, err := unixSocketpair()
			if err != nil {
				b.Fatal(err)
			}
			_, err = l.NewStream(fds[0], loop.StreamOptions{CloseFD: true,
				OnData: func(s *loop.Stream, p []byte) { s.Write(p) }})
			if err != nil {
				b.Fatal(err)
			}
			msg := make([]byte, 1024)
			got, left := 0, b.N
			var client *loop.Stream
			client, err = l.NewStream(fds[1], loop.StreamOptions{CloseFD: true,
				OnData: func(s *loop.Stream, p []byte) {
					if got += len(p); got < len(msg) {
						return
					}
					got = 0
					if left--; left == 0 {
						l.Stop()
						return
					}
					s.Write(msg)
				}})
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(msg)))
			b.ResetTimer()
			client.Write(msg)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			if err := l.Run(ctx); err != nil {
				b.Fatal(err)
			}
		})
	}
}

// BenchmarkDelayOff: a Delay and its OffDelay, from a goroutine that
// owns no running loop.
func BenchmarkDelayOff(b *testing.B) {
	for _, d := range drivers {
		b.Run(d.String(), func(b *testing.B) {
			l := benchLoop(b, d)
			fn := func() {}
			b.ReportAllocs()
			for b.Loop() {
				id, _ := l.Delay(time.Second, fn)
				l.OffDelay(id)
			}
		})
	}
}
