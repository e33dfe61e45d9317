package event_test

import (
	"testing"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/eventkind"
)

// Workload C1 (docs/benchmarks.md): the event core's hot paths, with the owner
// held as on a loop goroutine. Targets (DESIGN.md §6): no allocation in
// steady state and at most 5 ns per delivered callback with one subscriber;
// make bench judges both on BenchmarkC1Notify/1.

// BenchmarkC1Notify delivers one notification to n subscribers; the figure
// per delivered callback is reported as ns/callback.
func BenchmarkC1Notify(b *testing.B) {
	for _, n := range []int{1, 8, 64} {
		b.Run(itoa(n), func(b *testing.B) {
			var o event.Serial
			p := newProbe(&o, "bench", true, 0)
			o.Call(func() {
				for range n {
					p.AddCallback(event.NewCallback(func(event.Event, any, error) {}))
				}
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					eventkind.Notify(&p.Base, nil, nil)
				}
				b.StopTimer()
			})
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/callback")
		})
	}
}

// BenchmarkC1AddNotifyRemove subscribes a callback, notifies, and
// unsubscribes it: the life of a waker's subscription.
func BenchmarkC1AddNotifyRemove(b *testing.B) {
	var o event.Serial
	p := newProbe(&o, "bench", true, 0)
	cb := event.NewCallback(func(event.Event, any, error) {})
	o.Call(func() {
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			p.AddCallback(cb)
			eventkind.Notify(&p.Base, nil, nil)
			p.DelCallback(cb)
		}
	})
}

// BenchmarkC1StartStop arms and disarms a loop event.
func BenchmarkC1StartStop(b *testing.B) {
	var o event.Serial
	p := newProbe(&o, "bench", true, 0)
	o.Call(func() {
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			p.Start()
			p.Stop()
		}
	})
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}
